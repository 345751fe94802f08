#!/usr/bin/env bash
# From sign-up to a settled hand with curl and jq (docs/api.md § A worked example).
# Usage: CHAN_URL=http://127.0.0.1:8000 docs/examples/first_hand.sh   (after `make run`)
set -euo pipefail
API="${CHAN_URL:-http://127.0.0.1:8000}/api/v1"
PW='a-long-enough-Passw0rd!'
SUFFIX="${SUFFIX:-$RANDOM}"
json=(-H 'Content-Type: application/json')

# 1. Two players sign up; each answer holds the player's token (shown once).
A=$(curl -sf -X POST "$API/auth/register" "${json[@]}" \
      -d "{\"username\":\"lan$SUFFIX\",\"password\":\"$PW\"}" | jq -r .token)
B=$(curl -sf -X POST "$API/auth/register" "${json[@]}" \
      -d "{\"username\":\"minh$SUFFIX\",\"password\":\"$PW\"}" | jq -r .token)

# 2. Lan opens a two-seat table at stake 10; Minh sits down.
TABLE=$(curl -sf -X POST "$API/tables" "${json[@]}" -H "Authorization: Bearer $A" \
          -d '{"name":"Chiếu Lan","stake":10,"max_seats":2}' | jq .id)
curl -sf -X POST "$API/tables/$TABLE/join" "${json[@]}" -H "Authorization: Bearer $B" -d '{}' >/dev/null

# 3. Both say ready; the second ready deals the hand.
curl -sf -X POST "$API/tables/$TABLE/ready" "${json[@]}" -H "Authorization: Bearer $A" \
  -d '{"ready":true}' >/dev/null
HAND=$(curl -sf -X POST "$API/tables/$TABLE/ready" "${json[@]}" -H "Authorization: Bearer $B" \
         -d '{"ready":true}' | jq .hand_id)
echo "table $TABLE, hand $HAND"

# 4. Play: each player reads its own view and, when it has legal moves, sends the first one
#    with the view's seq (a race is a 409 stale_seq, read again) and a fresh Idempotency-Key.
while :; do
  for T in "$A" "$B"; do
    VIEW=$(curl -sf "$API/hands/$HAND" -H "Authorization: Bearer $T")
    [ "$(jq -r .status <<<"$VIEW")" = ended ] && break 2
    MOVE=$(jq -c 'if (.legal_moves | length) > 0
                  then .legal_moves[0] + {expected_seq: .seq} | del(.seat) else empty end' <<<"$VIEW")
    [ -z "$MOVE" ] && continue
    curl -s -o /dev/null -X POST "$API/hands/$HAND/moves" "${json[@]}" \
      -H "Authorization: Bearer $T" -H "Idempotency-Key: $(openssl rand -hex 16)" -d "$MOVE"
  done
done

# 5. The result, then the Quan it moved (the settlement lands a moment after the end: the
#    view shows its Quan, and the hand's events a `settled` record, once it is booked).
END=$(curl -sf "$API/hands/$HAND" -H "Authorization: Bearer $A")
jq -c '{status, outcome}' <<<"$END"
for _ in $(seq 1 50); do   # the settlement's Quan is in the view once it is booked
  jq -e '.settlement.quan != null' <<<"$END" >/dev/null && break
  sleep 0.2
  END=$(curl -sf "$API/hands/$HAND" -H "Authorization: Bearer $A")
done
jq -c '{settled: (.settlement.quan != null)}' <<<"$END"
curl -sf "$API/me/ledger?limit=1" -H "Authorization: Bearer $A" | jq -c '.results[0] | {kind, amount, balance_after, hand_id}'

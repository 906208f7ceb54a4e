# attack: workspace under /tmp (upstream #278): write beside it in /tmp, then unmount or rebind /tmp to reach the host's /tmp
# class: temp
# needs: tmp-workspace
echo escaped > "$OUT/beside-workspace"
umount -l /tmp 2>/dev/null && echo escaped > "$OUT/after-umount"
mount --bind / /mnt 2>/dev/null && echo escaped > "/mnt$OUT/after-rebind"

# attack: write through descriptor 3, which the caller opened on the outside file and passed in (not close-on-exec)
# class: caller-fd
# needs: leaked-fd
echo escaped >&3

# attack: write the workspace's .git (a hook and the config, which the next git command runs unconfined): the opt-in hardening keeps it read-only where the backend can (bwrap), and Landlock admits it cannot
# class: git
# needs: git-dir
printf '#!/bin/sh\necho pwned\n' > "$WS/.git/hooks/pre-commit"
printf '[core]\n\tfsmonitor = echo pwned\n' >> "$WS/.git/config"
exit 0

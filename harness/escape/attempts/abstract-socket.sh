# attack: connect to an abstract unix socket the harness listens on (@$HARNESS_SOCKET; abstract sockets have no file to confine)
# class: isolation
# effect: abstract-unix
# needs: socket
"$PROBE" connect-abstract "$HARNESS_SOCKET"

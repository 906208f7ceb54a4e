# attack: read a secret from the command's environment ($DSHSIM_ESCAPE_API_KEY) and print it
# class: isolation
# effect: secret-env
# needs: secret
printf 'key=%s\n' "$DSHSIM_ESCAPE_API_KEY"

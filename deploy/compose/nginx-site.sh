#!/bin/sh
# compose.yaml's nginx runs this before nginx starts (the official image runs the executables of
# /docker-entrypoint.d/): it installs the shipped site, deploy/nginx/pixgate.conf, as nginx's
# only site, with the gateway's public host name in place of its placeholder,
# pixgate.example.com (the server names, the https redirect, and the directory of the server
# certificate). Nothing else in the file changes.
#
#   PIXGATE_HOSTNAME           the gateway's public host name (pay.example.com.br)
#   PIXGATE_NGINX_SITE_SOURCE  the shipped file, as mounted
#   PIXGATE_NGINX_SITE         where nginx reads its site
set -eu

case "${PIXGATE_HOSTNAME:?set PIXGATE_HOSTNAME to the gateway's public host name}" in
    *[!A-Za-z0-9.-]* | .* | *..*)
        echo "PIXGATE_HOSTNAME is not a host name: $PIXGATE_HOSTNAME" >&2
        exit 1
        ;;
esac

sed "s/pixgate\.example\.com/$PIXGATE_HOSTNAME/g" "$PIXGATE_NGINX_SITE_SOURCE" >"$PIXGATE_NGINX_SITE"

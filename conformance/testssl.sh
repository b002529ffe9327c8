#!/usr/bin/env bash
# Kept so that older notes still work: the TLS scan now lives in scripts/tls-scan (issue 5).
exec "$(dirname "${BASH_SOURCE[0]}")/../scripts/tls-scan" "$@"

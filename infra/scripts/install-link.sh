#!/usr/bin/env bash
# Links a runtime you already run to your agent-platform account:
#
#   curl -fsSL __BACKEND_URL__/link | bash
#
# Needs curl. Environment (all optional):
#   RUNTIME_URL             the runtime's URL; asked for when unset
#   PLATFORM_API_KEY        your API key (sk_...); asked for on the terminal when unset
#   PLATFORM_GATEWAY_TOKEN  the runtime gateway's token; asked for when unset (may be set empty: none)
#   PLATFORM_BACKEND_URL    the platform backend (default: where this script came from)
#   PLATFORM_CONFIG_DIR     where the settings are saved (default: ~/.config/agent-platform)
set -euo pipefail

die() { printf 'link: %s\n' "$*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "$1 is required; install it and run this again"; }

# ask VAR PROMPT [-s]: one line from the terminal. Piped into bash, stdin is this script, so the
# question goes to /dev/tty; -s does not echo the answer.
ask() {
  local reply=''
  (: </dev/tty) 2>/dev/null || die "no terminal to ask on; set $1 and run this again"
  printf '%s' "$2" >/dev/tty
  if [ "${3:-}" = -s ]; then
    IFS= read -r -s reply </dev/tty || true
    printf '\n' >/dev/tty
  else
    IFS= read -r reply </dev/tty || true
  fi
  printf -v "$1" '%s' "$reply"
}

# field NAME JSON: a top-level string field of the backend's compact JSON (no jq needed).
field() { printf '%s' "$2" | sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p"; }

# json_str VALUE: VALUE as a JSON string.
json_str() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; printf '"%s"' "$s"; }

# post PATH JSON: POST with the API key as bearer token, passed through a file descriptor so it never
# shows in the process list; prints the body, or stops with the backend's error unless it is a 2xx.
post() {
  local out status
  out=$(curl -sS --connect-timeout 10 --max-time 60 -X POST -w '\n%{http_code}' \
    -K <(printf 'header = "Authorization: Bearer %s"\n' "$PLATFORM_API_KEY") \
    -H 'Content-Type: application/json' --data-binary @- "$PLATFORM_BACKEND_URL$1" <<<"$2") ||
    die "could not reach $PLATFORM_BACKEND_URL"
  status=${out##*$'\n'}
  out=${out%$'\n'*}
  case $status in
    2??) printf '%s\n' "$out" ;;
    *) die "$1 answered HTTP $status: $(field error "$out")" ;;
  esac
}

# Everything runs from main, so bash has read the whole script before any command could touch stdin.
main() {
  # Only a PLATFORM_-prefixed override: an unrelated BACKEND_URL must never receive the key.
  PLATFORM_BACKEND_URL="${PLATFORM_BACKEND_URL:-__BACKEND_URL__}"
  PLATFORM_BACKEND_URL="${PLATFORM_BACKEND_URL%/}"
  local config_dir="${PLATFORM_CONFIG_DIR:-${XDG_CONFIG_HOME:-$HOME/.config}/agent-platform}"

  need curl

  if [ -z "${RUNTIME_URL:-}" ]; then
    ask RUNTIME_URL 'URL of your running runtime (https://...): '
  fi
  RUNTIME_URL="${RUNTIME_URL%/}"
  [[ $RUNTIME_URL =~ ^https?://[^[:space:]]+$ ]] || die "RUNTIME_URL must be an http(s) URL"
  # Any HTTP answer will do (it may well be 401): this only checks that something is there.
  curl -sS -o /dev/null --connect-timeout 10 --max-time 20 "$RUNTIME_URL" ||
    die "no runtime answers at $RUNTIME_URL; start it (or fix the URL) and run this again"

  if [ -z "${PLATFORM_API_KEY:-}" ]; then
    ask PLATFORM_API_KEY 'Platform API key (sk_..., from the dashboard): ' -s
  fi
  [[ $PLATFORM_API_KEY =~ ^sk_[A-Za-z0-9_-]+$ ]] || die "that is not a platform API key (sk_...)"

  # Set but empty means "no token": only an unset PLATFORM_GATEWAY_TOKEN is asked for.
  if [ -z "${PLATFORM_GATEWAY_TOKEN+set}" ]; then
    ask PLATFORM_GATEWAY_TOKEN "The runtime's gateway token (leave empty if it has none): " -s
  fi
  [[ $PLATFORM_GATEWAY_TOKEN != *[[:cntrl:][:space:]]* ]] || die "PLATFORM_GATEWAY_TOKEN must not contain spaces or control characters"

  printf 'Checking the API key with %s\n' "$PLATFORM_BACKEND_URL"
  local answer user_id dashboard body
  answer=$(post /api/validate-key '{}')
  user_id=$(field userId "$answer")
  [ -n "$user_id" ] || die "unexpected answer from /api/validate-key: $answer"

  printf 'Linking %s\n' "$RUNTIME_URL"
  body="{\"userId\":$(json_str "$user_id"),\"mode\":\"link\""
  [ -z "$PLATFORM_GATEWAY_TOKEN" ] || body+=",\"gatewayToken\":$(json_str "$PLATFORM_GATEWAY_TOKEN")"
  answer=$(post /api/register-link "$body}")
  dashboard=$(field dashboardUrl "$answer")

  mkdir -p "$config_dir"
  (
    umask 077
    printf 'PLATFORM_BACKEND_URL=%q\nPLATFORM_USER_ID=%q\nPLATFORM_MODE=link\nRUNTIME_URL=%q\nPLATFORM_GATEWAY_TOKEN=%q\n' \
      "$PLATFORM_BACKEND_URL" "$user_id" "$RUNTIME_URL" "$PLATFORM_GATEWAY_TOKEN" >"$config_dir/link.env"
  )
  printf 'Linked. Settings are in %s\n' "$config_dir/link.env"
  printf 'Dashboard: %s\n' "$dashboard"
}

main "$@"

#!/usr/bin/env bash
# Registers this machine as a home (self-hosted) installation of the agent platform:
#
#   curl -fsSL __BACKEND_URL__/install | bash
#
# Needs curl and a running Docker. Environment (all optional):
#   PLATFORM_API_KEY        your API key (sk_...); asked for on the terminal when unset
#   PLATFORM_MODE           home (default) or cloud
#   PLATFORM_GATEWAY_TOKEN  the runtime gateway's token (default: a new random one)
#   PLATFORM_BACKEND_URL    the platform backend (default: where this script came from)
#   PLATFORM_CONFIG_DIR     where the settings are saved (default: ~/.config/agent-platform)
set -euo pipefail

die() { printf 'install: %s\n' "$*" >&2; exit 1; }
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

new_token() {
  if command -v openssl >/dev/null 2>&1; then
    openssl rand -hex 32
  else
    od -An -N32 -tx1 /dev/urandom | tr -d ' \n'
  fi
}

# Everything runs from main, so bash has read the whole script before any command could touch stdin.
main() {
  # Only a PLATFORM_-prefixed override: an unrelated BACKEND_URL must never receive the key.
  PLATFORM_BACKEND_URL="${PLATFORM_BACKEND_URL:-__BACKEND_URL__}"
  PLATFORM_BACKEND_URL="${PLATFORM_BACKEND_URL%/}"
  local mode="${PLATFORM_MODE:-home}"
  local config_dir="${PLATFORM_CONFIG_DIR:-${XDG_CONFIG_HOME:-$HOME/.config}/agent-platform}"
  case $mode in home | cloud) ;; *) die "PLATFORM_MODE must be home or cloud" ;; esac

  need curl
  need docker
  docker info >/dev/null 2>&1 || die "Docker is installed but not running; start it and run this again"

  if [ -z "${PLATFORM_API_KEY:-}" ]; then
    ask PLATFORM_API_KEY 'Platform API key (sk_..., from the dashboard): ' -s
  fi
  [[ $PLATFORM_API_KEY =~ ^sk_[A-Za-z0-9_-]+$ ]] || die "that is not a platform API key (sk_...)"

  local token="${PLATFORM_GATEWAY_TOKEN:-}"
  [ -n "$token" ] || token=$(new_token)
  [[ $token != *[[:cntrl:][:space:]]* ]] || die "PLATFORM_GATEWAY_TOKEN must not contain spaces or control characters"

  printf 'Checking the API key with %s\n' "$PLATFORM_BACKEND_URL"
  local answer user_id dashboard
  answer=$(post /api/validate-key '{}')
  user_id=$(field userId "$answer")
  [ -n "$user_id" ] || die "unexpected answer from /api/validate-key: $answer"

  printf 'Registering this machine (%s mode)\n' "$mode"
  answer=$(post /api/register-home "{\"userId\":$(json_str "$user_id"),\"mode\":\"$mode\",\"gatewayToken\":$(json_str "$token")}")
  dashboard=$(field dashboardUrl "$answer")

  # The gateway token is a secret: saved for the runtime, readable by this user only.
  mkdir -p "$config_dir"
  (
    umask 077
    printf 'PLATFORM_BACKEND_URL=%q\nPLATFORM_USER_ID=%q\nPLATFORM_MODE=%q\nPLATFORM_GATEWAY_TOKEN=%q\n' \
      "$PLATFORM_BACKEND_URL" "$user_id" "$mode" "$token" >"$config_dir/$mode.env"
  )
  printf 'Registered. Settings and the gateway token are in %s\n' "$config_dir/$mode.env"
  printf 'Dashboard: %s\n' "$dashboard"
}

main "$@"

#!/usr/bin/env bash
# Runs a Splash conformance suite in CI: the script behind action.yml, usable from any CI
# system (see docs/porting.md for GitLab). It builds splash-conform from the checkout of this
# repository it lives in, runs the worker or host suite against the given command, and writes
# the HTML, JSON and JUnit reports. Its exit status is that of splash-conform: 0 the run
# passed (or matched the expectations), 1 it failed, 2 usage, launch or build error.
#
# Inputs, as environment variables (all optional):
#   SPLASH_SUITE          worker (default) or host
#   SPLASH_COMMAND        the worker command (host suite: the driver command), split into
#                         words and expanded as a shell would; empty runs the bundled reference
#   SPLASH_EXPECT         an expectations file (-expect)
#   SPLASH_EXPECT_STRICT  "true": a listed check that no longer fails fails the run
#   SPLASH_ARGS           more splash-conform flags, split as a shell would (-without cancel ...)
#   SPLASH_REPORTS        the directory of the reports (default splash-conform-reports)
#   SPLASH_ACTION_PATH    the checkout of this repository (default: the script's parent)
#   SPLASH_BIN            where to build the executables (default: a fresh temporary directory)
set -euo pipefail

root=${SPLASH_ACTION_PATH:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
suite=${SPLASH_SUITE:-worker}
reports=${SPLASH_REPORTS:-splash-conform-reports}
bin=${SPLASH_BIN:-}
if [ -z "$bin" ]; then
	bin=$(mktemp -d)
	trap 'rm -rf "$bin"' EXIT
fi

case "$suite" in
worker) subcommand=() bundled=./cmd/splash-worker ;;
host) subcommand=(host) bundled=./cmd/splash-host-driver ;;
*)
	echo "conform-action: SPLASH_SUITE must be worker or host, not '$suite'" >&2
	exit 2
	;;
esac

eval "command=(${SPLASH_COMMAND:-})"
eval "extra=(${SPLASH_ARGS:-})"
packages=(./cmd/splash-conform)
if [ ${#command[@]} -eq 0 ]; then
	# splash-conform runs the reference it finds next to itself.
	packages+=("$bundled")
fi
echo "conform-action: building ${packages[*]} from $root"
(cd "$root" && CGO_ENABLED=0 go build -trimpath -o "$bin/" "${packages[@]}") || exit 2

mkdir -p "$reports"
flags=(-json "$reports/report.json" -junit "$reports/junit.xml" -html "$reports/report.html")
if [ -n "${SPLASH_EXPECT:-}" ]; then
	flags+=(-expect "$SPLASH_EXPECT")
fi
if [ "${SPLASH_EXPECT_STRICT:-false}" = true ]; then
	flags+=(-expect-strict)
fi
if [ ${#command[@]} -gt 0 ]; then
	extra+=(-- "${command[@]}")
fi

"$bin/splash-conform" -version
status=0
"$bin/splash-conform" ${subcommand[@]+"${subcommand[@]}"} "${flags[@]}" ${extra[@]+"${extra[@]}"} | tee "$reports/output.txt" || status=${PIPESTATUS[0]}
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
	{
		echo "### splash-conform $suite suite"
		echo
		echo '```'
		grep -E '^splash-conform: (CONFORMS|MATCHES EXPECTATIONS|DOES NOT CONFORM)' "$reports/output.txt" || true
		tail -n 1 "$reports/output.txt"
		echo '```'
	} >>"$GITHUB_STEP_SUMMARY"
fi
exit "$status"

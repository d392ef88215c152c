#!/bin/bash
# Starts a legacy ASMX host (Mono's System.Web.Services, the .NET Framework's reference code) serving
# the five services with the project's data set (test/fixtures/data). Usage: start.sh [PORT] [VIRTUAL_DIR]
# e.g. start.sh 9090   or   start.sh 9091 /StudentService. Needs Debian's mono-devel.
# XML_NAMESPACE=... serves another namespace; PROTOCOLS=HttpSoap,HttpGet,... sets web.config's protocols.
# npm run record-legacy starts it once per site configuration; it can be started by hand to ask it anything.
set -eu
port=${1:-9090} virt=${2:-/}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
command -v mcs >/dev/null || { echo "install mono-devel first (apt-get install -y mono-devel)"; exit 1; }
# the CSVs are read by the import's own reader (scripts/legacy/csv2tsv.ts), from a build of the project:
# LEGACY_HOST_BUILD's (the tests name theirs), else the dev tools' .dev-build, made if it is missing
csv2tsv="${LEGACY_HOST_BUILD:-$root/.dev-build}/scripts/legacy/csv2tsv.js"
[ -f "$csv2tsv" ] || [ -n "${LEGACY_HOST_BUILD:-}" ] || (cd "$root" && node scripts/build.js --out .dev-build >/dev/null)
site=/tmp/legacy-host-$port
rm -rf "$site"; mkdir -p "$site/bin" "$site/App_Data"
cp -a "$here/site/." "$site/"
[ -n "${XML_NAMESPACE:-}" ] && sed -i "s#http://tempuri.org/#$XML_NAMESPACE#" "$site"/*.asmx
# PROTOCOLS=HttpSoap,HttpPost,... : exactly these <webServices><protocols> entries, as a web.config would list them
if [ -n "${PROTOCOLS:-}" ]; then
  entries="<clear />"; for p in ${PROTOCOLS//,/ }; do entries="$entries<add name=\"$p\" />"; done
  perl -0pi -e "s#<protocols>.*?</protocols>#<protocols>$entries</protocols>#s" "$site/web.config"
fi
# the data set, as the tab-separated files the legacy code reads
node "$csv2tsv" "$root/test/fixtures/data/students.csv" >"$site/App_Data/students.tsv"
node "$csv2tsv" "$root/test/fixtures/data/devices.csv" >"$site/App_Data/devices.tsv"
mcs -out:"$site/bin/AsmxHost.exe" -r:System.Web.dll "$here/AsmxHost.cs"
cd "$site"
echo "legacy host on http://127.0.0.1:$port${virt%/}/ (log: $site/log)"
exec mono bin/AsmxHost.exe . "http://127.0.0.1:$port${virt%/}/" "$virt" >"$site/log" 2>&1

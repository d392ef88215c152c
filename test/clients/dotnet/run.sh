#!/bin/bash
# The .NET Framework client: proxies generated from each served ?wsdl by Mono's wsdl tool for SOAP,
# SOAP12, HttpGet and HttpPost (the "Add Web Reference" path), compiled with DotnetClient.cs by mcs in one
# go and run with mono against BASE_URL.
#
#   test/clients/dotnet/run.sh http://127.0.0.1:8080
#
# A proxy that cannot be generated or compiled is a FAIL line naming the protocol and endpoint (and so
# its operations); the program's own checks follow. Ends with `dotnet: N passed, M failed`.
set -u
base=${1:?usage: run.sh BASE_URL}
base=${base%/}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2

declare -A OPS=(
  [AuthCodeSending]='AuthCode'
  [GetStudnetsMarks]='GetStudentsMarks'
  [AboutUs]='GetAboutUs'
  [NotificationNotes]='GetStudentSchool'
  [PushNotificationMobile]='GetTokenDevice GetServerKeyAndSender'
)

# Twenty wsdl runs, each mostly Mono start-up: run them side by side, one per processor.
generate() {
  local proto=$1 svc=$2
  wsdl -nologo "-protocol:$proto" "-namespace:P_${proto}_$svc" "-out:${proto}_$svc.cs" "$base/$svc.asmx?wsdl" \
    >"${proto}_$svc.log" 2>&1 || echo "exit $?" >>"${proto}_$svc.log"
}
export -f generate
export base
for proto in SOAP SOAP12 HttpGet HttpPost; do
  for svc in "${!OPS[@]}"; do echo "$proto $svc"; done
done | xargs -P "$(nproc)" -n 2 bash -c 'generate "$0" "$1"'

failed=0
for log in *.log; do
  name=${log%.log}
  # wsdl's own status is not reliable across Mono versions: judge by its output file and messages.
  if [ ! -s "$name.cs" ] || grep -qiE '^(error|exit )|warning' "$log"; then
    proto=${name%%_*} svc=${name#*_}
    echo "FAIL dotnet $proto ${OPS[$svc]// /, } (wsdl -protocol:$proto $svc.asmx): $(grep -iE 'error|warning|exit' "$log" | head -2 | tr '\n' ' ')"
    failed=$((failed + 1))
    rm -f "$name.cs"
  fi
done
if [ "$failed" -gt 0 ]; then
  echo "dotnet: 0 passed, $failed failed"
  exit 1
fi

if ! mcs -nologo -out:client.exe -r:System.Web.Services.dll -r:System.Xml.dll -r:System.Core.dll -r:System.EnterpriseServices.dll \
     ./*.cs "$here/DotnetClient.cs" >mcs.log 2>&1; then
  echo "FAIL dotnet compile: $(grep -m3 'error' mcs.log | tr '\n' ' ')"
  echo "dotnet: 0 passed, 1 failed"
  exit 1
fi
exec mono client.exe "$base"

#!/bin/bash
# gSOAP, a strict WSDL/XSD reader: wsdl2h must translate each served ?wsdl into a header with a SOAP 1.1
# and a SOAP 1.2 service declaring every operation, and soapcpp2 must turn that into client proxies,
# both without any warning beyond the expected one that HTTP GET/POST bindings are not SOAP.
#
#   test/clients/gsoap.sh http://127.0.0.1:8080
#
# Prints one `FAIL gsoap <binding|tool> <operations> ...: ...` line per failed check (a tool's failure names
# the operations of the endpoint it was reading) and ends with `gsoap: N passed, M failed`; exits 1 when
# anything failed.
set -u
base=${1:?usage: gsoap.sh BASE_URL}
base=${base%/}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2

passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL gsoap $1: $2"; }
# The first few diagnostic lines of a log, on one line, for a FAIL message.
why() { grep -iE 'error|warning|cannot|fail' "$@" 2>/dev/null | head -3 | tr -s '\n\t ' '   '; }

# The contract: each endpoint and its operations.
declare -A OPS=(
  [AuthCodeSending]='AuthCode'
  [GetStudnetsMarks]='GetStudentsMarks'
  [AboutUs]='GetAboutUs'
  [NotificationNotes]='GetStudentSchool'
  [PushNotificationMobile]='GetTokenDevice GetServerKeyAndSender'
)

for svc in AuthCodeSending GetStudnetsMarks AboutUs NotificationNotes PushNotificationMobile; do
  mkdir "$svc" && cd "$svc" || exit 2
  ops="${OPS[$svc]// /, } ($svc.asmx)"
  # -Nsvc: one service (and one proxy class) per SOAP binding, so each binding is checked on its own.
  wsdl2h -Nsvc -o "$svc.h" "$base/$svc.asmx?wsdl" >wsdl2h.log 2>&1
  status=$?
  translated=no
  if [ "$status" != 0 ]; then
    fail "wsdl2h $ops" "exit $status $(why wsdl2h.log)"
  elif grep -iE '^(warning|error)|error:' wsdl2h.log | grep -vq 'ignoring RESTful binding'; then
    fail "wsdl2h $ops" "$(grep -iE '^(warning|error)|error:' wsdl2h.log | grep -v 'ignoring RESTful binding' | head -3 | tr '\n' ' ')"
  else
    translated=yes
    pass
  fi

  # -C client side only, -L no soapClientLib, -x no sample messages, -j proxy classes sharing a soap context.
  # (After a failed wsdl2h the header is a stub that soapcpp2 would accept, so it is not run at all.)
  if [ "$translated" = no ]; then
    fail "soapcpp2 $ops" "not run: wsdl2h did not translate cleanly"
  elif soapcpp2 -C -L -x -j -I/usr/share/gsoap/import "$svc.h" >soapcpp2.log 2>&1 \
     && grep -q 'Compilation successful' soapcpp2.log && ! grep -qiE 'warning|error' soapcpp2.log; then
    pass
  else
    fail "soapcpp2 $ops" "$(why soapcpp2.log)"
  fi

  # One proxy class per SOAP binding. (Its envelope version is not checked: with both bindings in one
  # header, soapcpp2 gives every proxy the same namespace table, so it is not a per-binding property.)
  for binding in Soap Soap12; do
    proxy="soap${svc}${binding}Proxy.h"
    for op in ${OPS[$svc]}; do
      if [ ! -f "$proxy" ]; then
        fail "$binding $op" "no $binding proxy generated for $svc"
      elif ! grep -q "virtual int $op(const char \*soap_endpoint_url" "$proxy"; then
        fail "$binding $op" "the $binding proxy for $svc has no $op operation"
      else
        pass
      fi
    done
  done
  cd "$work" || exit 2
done

echo "gsoap: $passed passed, $failed failed"
[ "$failed" = 0 ]

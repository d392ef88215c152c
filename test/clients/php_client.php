<?php
// PHP's SoapClient (ext-soap), the way its users call the service: a client built from the served
// ?wsdl, once for SOAP 1.1 and once for SOAP 1.2, every operation checked against the fixture data
// set (test/fixtures/data).
//
//   php test/clients/php_client.php http://127.0.0.1:8080
//
// Prints one `FAIL php <version> <operation>[ <case>]: ...` line per failed check and ends with
// `php: N passed, M failed`; exits 1 when anything failed.
declare(strict_types=1);

$base = rtrim($argv[1] ?? '', '/');
if ($base === '') { fwrite(STDERR, "usage: php php_client.php BASE_URL\n"); exit(2); }

const ALNOOR = 'http://alnoor.school.example';
$passed = 0;
$failed = 0;

function fail(string $name, string $why): void {
  global $failed;
  $failed++;
  echo "FAIL php $name: $why\n";
}

/** Runs one call; an exception fails that check alone, so every message names its operation. */
function check(string $name, callable $call, $want): void {
  global $passed;
  try {
    $got = $call();
  } catch (Throwable $e) {
    fail($name, get_class($e) . ': ' . $e->getMessage());
    return;
  }
  // Strict comparison: null must stay null and '' must stay ''.
  if ($got === $want) $passed++;
  else fail($name, 'got ' . var_export($got, true) . ', want ' . var_export($want, true));
}

function expectFault(string $name, callable $call, string $code): void {
  global $passed;
  try {
    $got = $call();
  } catch (SoapFault $f) {
    if ($f->faultcode === $code) $passed++;
    else fail($name, "fault code {$f->faultcode}, want $code ({$f->getMessage()})");
    return;
  } catch (Throwable $e) {
    fail($name, get_class($e) . ' instead of a SOAP fault: ' . $e->getMessage());
    return;
  }
  fail($name, 'no fault, got ' . var_export($got, true));
}

/** ext-soap gives one StudentInfo as an object and several as an array; an empty list has no member. */
function rows($result): array {
  $items = $result->GetStudentSchoolResult->StudentInfo ?? [];
  if (!is_array($items)) $items = [$items];
  return array_map(fn($s) => [$s->id_student ?? null, $s->fullName ?? null, $s->id_device ?? null, $s->ShowActive ?? null], $items);
}

ini_set('soap.wsdl_cache_enabled', '0');
ini_set('default_socket_timeout', '15');

foreach ([SOAP_1_1 => ['soap11', 'soap:Client'], SOAP_1_2 => ['soap12', 'soap:Sender']] as $version => [$tag, $faultCode]) {
  $clients = [];
  // One client per endpoint, built on first use so that a WSDL ext-soap cannot read fails each check by name.
  $c = function (string $svc) use (&$clients, $base, $version): SoapClient {
    return $clients[$svc] ??= new SoapClient("$base/$svc.asmx?wsdl", [
      'soap_version' => $version, 'exceptions' => true, 'cache_wsdl' => WSDL_CACHE_NONE,
      'connection_timeout' => 15, 'features' => SOAP_SINGLE_ELEMENT_ARRAYS,
    ]);
  };
  $token = fn(string $id) => $c('PushNotificationMobile')->GetTokenDevice(['id' => $id])->GetTokenDeviceResult ?? null;
  // System.Char travels as its UTF-16 code, as the WSDL's unsignedShort says ('0' and '1' are ASCII, so
  // ord() is enough and php-mbstring is not needed).
  $school = fn(string $url, string $active) => rows($c('NotificationNotes')->GetStudentSchool(['school_base_url' => $url, 'show_active' => ord($active)]));

  check("$tag GetTokenDevice", fn() => $token('dev-1001'), 'fcm:APA91bH-token-1001');
  check("$tag GetTokenDevice escaped", fn() => $token('dev-1004'), 'tok<&>"quoted"');
  check("$tag GetTokenDevice arabic", fn() => $token('dev-3001'), 'رمز-3001');
  check("$tag GetTokenDevice unknown", fn() => $token('no-such-device'), null);
  check("$tag GetTokenDevice empty token", fn() => $token('dev-empty'), '');
  check("$tag GetServerKeyAndSender", fn() => get_object_vars($c('PushNotificationMobile')->GetServerKeyAndSender([])), []);

  check("$tag GetStudentSchool", fn() => $school(ALNOOR, '1'), [
    ['1001', 'Ali Hassan', 'dev-1001', '1'],
    ['1002', 'Zainab Kareem', 'dev-1002', '1'],
    ['1004', 'سارة محمد & <co>', 'dev-1004', '1'],
  ]);
  check("$tag GetStudentSchool inactive", fn() => $school(ALNOOR, '0'), [['1003', 'Omar Adel', 'dev-1003', '0']]);
  check("$tag GetStudentSchool arabic school", fn() => $school('http://مدرسة.example', '1'), [['3001', 'نور الهدى', 'dev-3001', '1']]);
  check("$tag GetStudentSchool empty device", fn() => $school('http://rafidain.school.example', '1'), [['2001', 'Mustafa Jalal', '', '1']]);
  check("$tag GetStudentSchool empty", fn() => $school('http://nowhere.example', '1'), []);
  check("$tag GetStudentSchool large", fn() => count($school('http://big.school.example', '1')), 500);
  // 65536 does not fit a char: the service must answer with a client-side fault.
  expectFault("$tag GetStudentSchool fault", fn() => $c('NotificationNotes')->GetStudentSchool(['school_base_url' => 'x', 'show_active' => 65536]), $faultCode);

  check("$tag AuthCode", fn() => get_object_vars($c('AuthCodeSending')->AuthCode(['code' => '4821', 'phone' => '+9647701234567'])), []);
  check("$tag GetStudentsMarks", fn() => get_object_vars($c('GetStudnetsMarks')->GetStudentsMarks(['StudnetID' => '1001', 'SubjectID' => 'MATH-7'])), []);
  check("$tag GetAboutUs", fn() => get_object_vars($c('AboutUs')->GetAboutUs([])), []);

  // An operation the service does not have, sent by a WSDL-less client: ASMX's fault for an unknown action.
  expectFault("$tag unknown operation fault", function () use ($base, $version) {
    $raw = new SoapClient(null, ['location' => "$base/PushNotificationMobile.asmx", 'uri' => 'http://tempuri.org/',
      'soap_version' => $version, 'exceptions' => true, 'connection_timeout' => 15]);
    return $raw->__soapCall('Nope', [], ['soapaction' => 'http://tempuri.org/Nope']);
  }, $faultCode);
}

echo "php: $passed passed, $failed failed\n";
exit($failed ? 1 : 0);

import type { EndpointSpec } from '../contract/operations';
import { escapeMarkup } from '../basics/escape';
import type { Protocol } from '../config';

/**
 * `GET /X.asmx?disco`: the discovery document as ASMX serializes it (XmlSerializer, two-space
 * indentation, LF, no final newline), one `soap` entry per SOAP binding. The serializer gives every
 * undeclared namespace a fresh prefix, hence q1 then q2 for the same namespace.
 */
export function discoDocument(serviceUrl: string, endpoint: EndpointSpec, ns: string, protocols: ReadonlySet<Protocol>): string {
  const url = escapeMarkup(serviceUrl);
  const namespace = escapeMarkup(ns);
  const bindings = [
    ...(protocols.has('HttpSoap') ? [`${endpoint.name}Soap`] : []),
    ...(protocols.has('HttpSoap12') ? [`${endpoint.name}Soap12`] : []),
  ];
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<discovery xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns="http://schemas.xmlsoap.org/disco/">',
    `  <contractRef ref="${url}?wsdl" docRef="${url}" xmlns="http://schemas.xmlsoap.org/disco/scl/" />`,
    ...bindings.map(
      (binding, i) =>
        `  <soap address="${url}" xmlns:q${i + 1}="${namespace}" binding="q${i + 1}:${binding}" xmlns="http://schemas.xmlsoap.org/disco/soap/" />`,
    ),
    '</discovery>',
  ].join('\n');
}

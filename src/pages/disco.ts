import type { EndpointSpec } from '../services/contract';
import { escapeMarkup } from '../escape';

/**
 * `GET /X.asmx?disco`: the discovery document as ASMX serializes it (XmlSerializer, two-space
 * indentation, LF, no final newline), one `soap` entry per SOAP binding. The serializer gives every
 * undeclared namespace a fresh prefix, hence q1 then q2 for the same namespace.
 */
export function discoDocument(serviceUrl: string, endpoint: EndpointSpec, ns: string): string {
  const url = escapeMarkup(serviceUrl);
  const namespace = escapeMarkup(ns);
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<discovery xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns="http://schemas.xmlsoap.org/disco/">',
    `  <contractRef ref="${url}?wsdl" docRef="${url}" xmlns="http://schemas.xmlsoap.org/disco/scl/" />`,
    `  <soap address="${url}" xmlns:q1="${namespace}" binding="q1:${endpoint.name}Soap" xmlns="http://schemas.xmlsoap.org/disco/soap/" />`,
    `  <soap address="${url}" xmlns:q2="${namespace}" binding="q2:${endpoint.name}Soap12" xmlns="http://schemas.xmlsoap.org/disco/soap/" />`,
    '</discovery>',
  ].join('\n');
}

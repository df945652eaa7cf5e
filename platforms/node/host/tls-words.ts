// OpenSSL's reasons, which Node passes on as they are ("ssl3_get_record:wrong version number"), in words
// that say what happened and what to check.
const IN_WORDS: Record<string, string> = {
  // The first bytes back were not a TLS record: typically a plain-HTTP server on an https:// URL.
  ERR_SSL_WRONG_VERSION_NUMBER: 'the server did not speak TLS (is it plain http://, not https://?)',
  ERR_SSL_PACKET_LENGTH_TOO_LONG: 'the server did not speak TLS (is it plain http://, not https://?)',
};

/** The words for a TLS failure's error code, or null when the code is not one of those. */
export function tlsFailureInWords(code: string | null): string | null {
  return code !== null && Object.hasOwn(IN_WORDS, code) ? IN_WORDS[code] : null;
}

//! SPDY/3's header compression dictionary (draft-mbelshe-httpbis-spdy-00, section 2.6.10.1):
//! length-prefixed header names and values, then a run of common status lines, dates and
//! media types. Kept as its parts, a table, rather than spelt out as 1,423 bytes.

use bytes::BufMut;

/// The header names and values, each prefixed with its length in the dictionary.
const WORDS: [&str; 65] = [
    "options",
    "head",
    "post",
    "put",
    "delete",
    "trace",
    "accept",
    "accept-charset",
    "accept-encoding",
    "accept-language",
    "accept-ranges",
    "age",
    "allow",
    "authorization",
    "cache-control",
    "connection",
    "content-base",
    "content-encoding",
    "content-language",
    "content-length",
    "content-location",
    "content-md5",
    "content-range",
    "content-type",
    "date",
    "etag",
    "expect",
    "expires",
    "from",
    "host",
    "if-match",
    "if-modified-since",
    "if-none-match",
    "if-range",
    "if-unmodified-since",
    "last-modified",
    "location",
    "max-forwards",
    "pragma",
    "proxy-authenticate",
    "proxy-authorization",
    "range",
    "referer",
    "retry-after",
    "server",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "user-agent",
    "vary",
    "via",
    "warning",
    "www-authenticate",
    "method",
    "get",
    "status",
    "200 OK",
    "version",
    "HTTP/1.1",
    "url",
    "public",
    "set-cookie",
    "keep-alive",
    "origin",
];

/// Then, without length prefixes:
const TAIL: [&str; 5] = [
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505",
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request\
     401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented\
     503 Service Unavailable",
    "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT",
    "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,\
     text/plain,text/javascript,publicprivatemax-age=gzip,deflate,sdch",
    "charset=utf-8charset=iso-8859-1,utf-,*,enq=0.",
];

/// The dictionary, built from [`WORDS`] and [`TAIL`].
pub(super) fn dictionary() -> Vec<u8> {
    let mut d = Vec::with_capacity(1423);
    for w in WORDS {
        d.put_u32(w.len() as u32);
        d.extend_from_slice(w.as_bytes());
    }
    for t in TAIL {
        d.extend_from_slice(t.as_bytes());
    }
    d
}

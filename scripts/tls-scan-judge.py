#!/usr/bin/env python3
"""Judge one testssl.sh JSON report (`--jsonfile`) for scripts/tls-scan.

Prints a short summary (protocols, findings by severity, vulnerability checks that are not OK)
and exits 1 if a finding rated MEDIUM or worse is not about the throwaway test certificate.
Why the exception: a self-signed certificate without OCSP, CRL or CAA is what the scan runs
with, not something tern chooses; those findings are still listed, marked "ignored".

With `--legacy` the report is of a bind with the legacy policy (issue 21: the OpenSSL engine,
TLS 1.0 and up, CBC and static-RSA suites). Such a bind draws findings by design, so the judge
does not stop at the severity bar; it
- lists every finding rated LOW or worse that EXPECTED_LEGACY names, with its category and the
  reason it is expected (a finding is expected only if its text matches and it is rated no
  worse than MEDIUM: a "VULNERABLE" LUCKY13, or BEAST on SSLv3, is not);
- fails on any finding rated MEDIUM or worse that is neither expected nor about the test
  certificate, as the default judging does;
- fails unless every check in MUST_BE_CLEAN ran and came out clean, whatever its severity:
  testssl rates some of these only LOW (SWEET32, for one), and they are what the OpenSSL
  engine promises never to allow, legacy policy or not.

Usage: tls-scan-judge.py [--legacy] REPORT.json. Exit status: 0 pass, 1 a finding.
"""
import json
import re
import sys

BAD = ("MEDIUM", "HIGH", "CRITICAL")
RANK = {"OK": 0, "INFO": 0, "LOW": 1, "MEDIUM": 2, "HIGH": 3, "CRITICAL": 4}
# Finding ids that describe the test certificate, not tern's TLS policy.
CERT_IDS = ("cert", "OCSP", "DNS_CAA", "intermediate", "chain_of_trust")
PROTOCOLS = ("SSLv2", "SSLv3", "TLS1", "TLS1_1", "TLS1_2", "TLS1_3")
VULNS = ("heartbleed", "CCS", "ticketbleed", "ROBOT", "secure_renego", "secure_client_renego",
         "CRIME_TLS", "BREACH", "POODLE_SSL", "fallback_SCSV", "SWEET32", "FREAK", "DROWN",
         "LOGJAM", "BEAST", "LUCKY13", "winshock", "RC4")

# Findings a legacy bind draws by design: id -> (pattern its text must match, category, reason).
# Ids of both testssl 3.0 and 3.2 where they differ (cipherlist_AVERAGE / _OBSOLETED).
EXPECTED_LEGACY = {
    "TLS1": (r"^offered", "old protocol",
             "TLS 1.0 is offered on purpose (min_version = \"1.0\"): the clients this bind is for"),
    "TLS1_1": (r"^offered", "old protocol",
               "TLS 1.1 lies between the minimum (1.0) and 1.3, so it is offered too"),
    "cipherlist_AVERAGE": (r"^offered", "CBC suites",
                           "AES-CBC with HMAC-SHA1 is all TLS 1.0/1.1 and static RSA have"),
    "cipherlist_OBSOLETED": (r"^offered", "CBC suites",
                             "AES-CBC with HMAC-SHA1 is all TLS 1.0/1.1 and static RSA have"),
    "BEAST_CBC_TLS1": (r"\S", "BEAST (TLS 1.0 CBC)",
                       "TLS 1.0 has no suite but CBC ones; BEAST needs a client without 1/n-1 "
                       "record splitting, and clients that can do 1.1 or 1.2 get those"),
    "BEAST": (r"higher protocols", "BEAST (TLS 1.0 CBC)",
              "the summary of BEAST_CBC_TLS1, rated down because 1.1 and 1.2 are offered"),
    "LUCKY13": (r"^potentially", "CBC timing",
                "testssl flags any CBC suite 'potentially' vulnerable; OpenSSL's CBC record "
                "check is constant-time, and it offers encrypt-then-MAC (RFC 7366) to clients"),
}

# Checks that must run and come out clean on a legacy bind: id -> what a failure would mean.
MUST_BE_CLEAN = {
    "SSLv2": "SSLv2 offered (DROWN; the engine's minimum is TLS 1.0)",
    "SSLv3": "SSLv3 offered (POODLE; the engine's minimum is TLS 1.0)",
    "cipherlist_NULL": "NULL (unencrypted) suites offered",
    "cipherlist_aNULL": "anonymous (unauthenticated) suites offered",
    "cipherlist_EXPORT": "export suites offered (FREAK, Logjam)",
    "cipherlist_LOW": "DES, RC2 or RC4 suites offered",
    "cipherlist_3DES_IDEA": "3DES or IDEA suites offered (64-bit blocks: SWEET32)",
    "heartbleed": "Heartbleed",
    "CCS": "CCS injection",
    "ticketbleed": "Ticketbleed",
    "ROBOT": "ROBOT: a Bleichenbacher oracle in static-RSA key exchange",
    "secure_renego": "no secure renegotiation (RFC 5746)",
    "secure_client_renego": "client-initiated renegotiation accepted",
    "CRIME_TLS": "TLS compression (CRIME)",
    "BREACH": "HTTP compression of the tested page (BREACH)",
    "POODLE_SSL": "POODLE (SSLv3)",
    "fallback_SCSV": "no downgrade protection (TLS_FALLBACK_SCSV)",
    "SWEET32": "64-bit block ciphers (SWEET32)",
    "FREAK": "export RSA (FREAK)",
    "DROWN": "DROWN (SSLv2 with this certificate)",
    "LOGJAM": "weak or export DH (Logjam)",
    "RC4": "RC4 suites (RFC 7465)",
}


def clean(f):
    """A check came out clean: rated OK, or saying so (testssl rates some clean results INFO)."""
    return f["severity"] == "OK" or f["finding"].startswith(("not offered", "not vulnerable"))


def expected(f):
    """The (category, reason) of a finding the legacy policy draws by design, else None."""
    entry = EXPECTED_LEGACY.get(f["id"])
    if entry is None or RANK.get(f["severity"], 9) > RANK["MEDIUM"]:
        return None
    pattern, category, reason = entry
    return (category, reason) if re.search(pattern, f["finding"]) else None


def main(path, legacy):
    with open(path, encoding="utf-8") as f:
        findings = json.load(f)
    by_id = {f["id"]: f for f in findings}
    counts = {}
    for f in findings:
        counts[f.get("severity", "?")] = counts.get(f.get("severity", "?"), 0) + 1
    is_cert = [f["id"].startswith(CERT_IDS) for f in findings]
    ignored = [f for f, c in zip(findings, is_cert) if f.get("severity") in BAD and c]
    rest = [f for f, c in zip(findings, is_cert) if not c]
    accepted = [(f, expected(f)) for f in rest if legacy and RANK.get(f["severity"], 9) >= 1]
    accepted = [(f, why) for f, why in accepted if why]
    dirty = [i for i in MUST_BE_CLEAN if i not in by_id or not clean(by_id[i])] if legacy else []
    flagged = [f for f in rest if f.get("severity") in BAD and f["id"] not in dirty
               and not (legacy and expected(f))]

    offered = [p for p in PROTOCOLS if p in by_id and by_id[p]["finding"].startswith("offered")]
    print(f"  protocols offered: {', '.join(offered) or 'none'}")
    vulns_ok = sum(1 for v in VULNS if v in by_id and by_id[v].get("severity") in ("OK", "INFO"))
    print(f"  vulnerability checks: {vulns_ok} of {sum(1 for v in VULNS if v in by_id)} OK")
    print("  findings by severity: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for f in ignored:
        print(f"  ignored (test certificate) {f['id']}: {f['finding']} ({f['severity']})")
    for f, (category, reason) in accepted:
        print(f"  expected (legacy: {category}) {f['id']}: {f['finding']} ({f['severity']})"
              f"\n      why: {reason}")
    if legacy:
        print(f"  must be clean: {len(MUST_BE_CLEAN) - len(dirty)} of {len(MUST_BE_CLEAN)} "
              f"({', '.join(MUST_BE_CLEAN)})")
    for i in dirty:
        got = f"{by_id[i]['finding']} ({by_id[i]['severity']})" if i in by_id else "not run"
        print(f"  FLAGGED {i}: {got}: {MUST_BE_CLEAN[i]}")
    for f in flagged:
        print(f"  FLAGGED {f['id']}: {f['finding']} ({f['severity']})")
    print(f"  {len(findings)} findings, {len(flagged) + len(dirty)} flagged")
    return 1 if flagged or dirty else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    is_legacy = args[:1] == ["--legacy"]
    if is_legacy:
        args = args[1:]
    if len(args) != 1:
        sys.exit("usage: tls-scan-judge.py [--legacy] REPORT.json")
    sys.exit(main(args[0], is_legacy))

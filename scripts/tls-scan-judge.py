#!/usr/bin/env python3
"""Judge one testssl.sh JSON report (`--jsonfile`) for scripts/tls-scan.

Prints a short summary (protocols, findings by severity, vulnerability checks that are not OK)
and exits 1 if a finding rated MEDIUM or worse is not about the throwaway test certificate.
Why the exception: a self-signed certificate without OCSP, CRL or CAA is what the scan runs
with, not something tern chooses; those findings are still listed, marked "ignored".
"""
import json
import sys

BAD = ("MEDIUM", "HIGH", "CRITICAL")
# Finding ids that describe the test certificate, not tern's TLS policy.
CERT_IDS = ("cert", "OCSP", "DNS_CAA", "intermediate", "chain_of_trust")
PROTOCOLS = ("SSLv2", "SSLv3", "TLS1", "TLS1_1", "TLS1_2", "TLS1_3")
VULNS = ("heartbleed", "CCS", "ticketbleed", "ROBOT", "secure_renego", "secure_client_renego",
         "CRIME_TLS", "BREACH", "POODLE_SSL", "fallback_SCSV", "SWEET32", "FREAK", "DROWN",
         "LOGJAM", "BEAST", "LUCKY13", "winshock", "RC4")


def main(path):
    with open(path, encoding="utf-8") as f:
        findings = json.load(f)
    by_id = {f["id"]: f for f in findings}
    counts = {}
    for f in findings:
        counts[f.get("severity", "?")] = counts.get(f.get("severity", "?"), 0) + 1
    flagged = [f for f in findings if f.get("severity") in BAD and not f["id"].startswith(CERT_IDS)]
    ignored = [f for f in findings if f.get("severity") in BAD and f["id"].startswith(CERT_IDS)]

    offered = [p for p in PROTOCOLS if p in by_id and by_id[p]["finding"].startswith("offered")]
    print(f"  protocols offered: {', '.join(offered) or 'none'}")
    vulns_ok = sum(1 for v in VULNS if v in by_id and by_id[v].get("severity") in ("OK", "INFO"))
    print(f"  vulnerability checks: {vulns_ok} of {sum(1 for v in VULNS if v in by_id)} OK")
    print("  findings by severity: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for f in ignored:
        print(f"  ignored (test certificate) {f['id']}: {f['finding']} ({f['severity']})")
    for f in flagged:
        print(f"  FLAGGED {f['id']}: {f['finding']} ({f['severity']})")
    print(f"  {len(findings)} findings, {len(flagged)} flagged")
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

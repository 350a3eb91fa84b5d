/* check_sarif.h -- `trainguard check --output sarif`: the CheckReport as a SARIF 2.1.0 log
 * (OASIS; tests/schemas/sarif-schema-2.1.0.json), the format GitHub code scanning uploads.
 *
 * One run; tool.driver carries every rule of the catalogue (id, shortDescription = summary,
 * help = help text, defaultConfiguration.level = default action, properties.since). One result
 * per finding: ruleId, ruleIndex, level ("error" for a
 * rule acting at deny, "warning" at warn: the rule's effective action, as --fail-on reads it),
 * message "FIELD: MESSAGE", and one location: the file (artifactLocation.uri, a relative
 * reference; file:// for an absolute path; none for standard input) with region.startLine the
 * line where the object's document starts, and a logicalLocation naming the object
 * ("KIND/NAMESPACE/NAME:FIELD", with apiVersion, kind, namespace, name and field as properties).
 * Errors become error notifications of the invocation, ignored documents note notifications. */
#ifndef TG_CHECK_SARIF_H
#define TG_CHECK_SARIF_H

#include <jansson.h>

#define TG_SARIF_SCHEMA                                                                            \
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
#define TG_INFORMATION_URI "https://github.com/trainguard/trainguard"

/* The SARIF log of report (a CheckReport, borrowed): a new reference, NULL on ENOMEM. */
json_t *tg_check_sarif(const json_t *report);

/* The URI reference SARIF gets for a file path: "./" prefixes dropped, an absolute path as a
 * file:// URI, bytes outside RFC 3986's unreserved set and "/" percent-encoded. Writes into buf
 * (always terminated); returns buf. */
const char *tg_check_sarif_uri(const char *path, char *buf, size_t len);

#endif

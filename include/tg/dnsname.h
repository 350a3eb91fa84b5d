/* dnsname.h -- Kubernetes name syntax (DNS-1123), the one checker every layer calls. */
#ifndef TG_DNSNAME_H
#define TG_DNSNAME_H

#include <stdbool.h>
#include <stddef.h>

/* A lowercase letter or digit. */
bool tg_dns_alnum(char c);

/* A DNS-1123 label (namespace names, label values' DNS parts): 1 to 63 lowercase letters,
 * digits and '-', a letter or digit at both ends. */
bool tg_dns1123_label(const char *s);

/* A DNS-1123 subdomain of n bytes: 1 to 253, labels joined by single dots. */
bool tg_dns1123_subdomain(const char *s, size_t n);

#endif

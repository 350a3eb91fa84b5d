/* dnsname.c -- DNS-1123 labels and subdomains as Kubernetes' validation defines them
 * (k8s.io/apimachinery/pkg/util/validation: IsDNS1123Label, IsDNS1123Subdomain). */
#include "tg/dnsname.h"

#include <string.h>

bool tg_dns_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool tg_dns1123_label(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > 63 || !tg_dns_alnum(s[0]) || !tg_dns_alnum(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!tg_dns_alnum(s[i]) && s[i] != '-')
            return false;
    return true;
}

bool tg_dns1123_subdomain(const char *s, size_t n)
{
    if (n == 0 || n > 253 || !tg_dns_alnum(s[0]) || !tg_dns_alnum(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!tg_dns_alnum(s[i]) && s[i] != '-' && s[i] != '.')
            return false;
        if (s[i] == '.' && (!tg_dns_alnum(s[i - 1]) || !tg_dns_alnum(s[i + 1])))
            return false;
    }
    return true;
}

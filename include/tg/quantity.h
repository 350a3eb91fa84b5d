/* quantity.h -- Kubernetes resource quantities ("8", "8k", "5120Mi", "1e3", "500m", "0.5Gi"). */
#ifndef TG_QUANTITY_H
#define TG_QUANTITY_H

#include <jansson.h>
#include <stdbool.h>

/* A parsed quantity. Exact for every value with at most 9 fractional decimal digits (nano units,
 * the finest Kubernetes keeps; finer values round up as Kubernetes does) and magnitude < 1e20. */
struct tg_quantity {
    __int128 nano; /* value x 1e9 */
};

/* Parses the Kubernetes quantity grammar: sign, digits, optional fraction, then one suffix of
 * m k M G T P E, Ki Mi Gi Ti Pi Ei, or an exponent e/E[sign]digits. Returns 0, -EINVAL (not a
 * quantity: "", "$EFA_PER_NODE", "1.5.2", "4 ", "Gi") or -ERANGE (too large). */
int tg_quantity_parse(const char *s, struct tg_quantity *q);

/* A quantity from JSON: a string, or a number as the API server accepts it (4, 4.0, 1e3).
 * -EINVAL for any other JSON type (null, bool, object, array). */
int tg_quantity_from_json(const json_t *v, struct tg_quantity *q);

bool tg_quantity_is_integer(const struct tg_quantity *q);
bool tg_quantity_is_negative(const struct tg_quantity *q);
/* The integer value: 0, or -EINVAL (has a fraction) or -ERANGE (beyond long long). */
int tg_quantity_to_int(const struct tg_quantity *q, long long *out);
/* <0, 0, >0 like strcmp. Exact. */
int tg_quantity_cmp(const struct tg_quantity *a, const struct tg_quantity *b);
/* Canonical text for messages ("5Gi" stays readable: writes the integer or decimal value). */
void tg_quantity_format(const struct tg_quantity *q, char *buf, size_t len);

#endif

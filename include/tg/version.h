/* version.h -- the trainguard release (X.Y.Z); the catalogue gives each rule the X.Y that
 * introduced it. */
#ifndef TG_VERSION_H
#define TG_VERSION_H

#define TG_VERSION "0.2.0"

/* TG_VERSION, for code that wants a function. */
const char *tg_version(void);

#endif

/* test_certs.c -- `trainguard certs`: files, modes, chain, SANs, key types, refusals, bad input. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "tg/certs_cmd.h"

static char tmpdir[256];
static char outdir[320];

static void make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof(tmpdir), "%s/tg-certs-XXXXXX", base && *base ? base : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    snprintf(outdir, sizeof(outdir), "%s/out", tmpdir);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_tmpdir(void)
{
    if (tmpdir[0])
        nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    tmpdir[0] = '\0';
}

static const char *in_out(const char *name)
{
    static char path[400];
    snprintf(path, sizeof(path), "%s/%s", outdir, name);
    return path;
}

static X509 *load_cert(const char *name)
{
    FILE *f = fopen(in_out(name), "r");
    X509 *x;
    ck_assert_msg(f != NULL, "cannot open %s", name);
    x = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    ck_assert_msg(x != NULL, "%s is not a PEM certificate", name);
    return x;
}

static EVP_PKEY *load_key(const char *name)
{
    FILE *f = fopen(in_out(name), "r");
    EVP_PKEY *k;
    ck_assert_msg(f != NULL, "cannot open %s", name);
    k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
    fclose(f);
    ck_assert_msg(k != NULL, "%s is not a PEM private key", name);
    return k;
}

/* Reads a whole small file into buf; returns its length. */
static size_t slurp(const char *name, char *buf, size_t cap)
{
    FILE *f = fopen(in_out(name), "rb");
    size_t n;
    ck_assert_ptr_nonnull(f);
    n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = '\0';
    return n;
}

static const char *dns_extra[] = {"localhost", "trainguard.example.com"};
static const char *ip_extra[] = {"127.0.0.1", "::1"};

static void default_opts(struct tg_certs_opts *o)
{
    tg_certs_opts_init(o);
    o->out_dir = outdir;
    o->service = "trainguard";
    o->ns = "trainguard";
    o->dns = dns_extra;
    o->ndns = 2;
    o->ips = ip_extra;
    o->nips = 2;
}

static void generate_ok(const struct tg_certs_opts *o, char **bundle)
{
    char err[512] = "";
    int ret = tg_certs_generate(o, bundle, err, sizeof(err));
    ck_assert_msg(ret == 0, "tg_certs_generate: %d %s", ret, err);
}

/* X509_verify_cert of tls.crt against ca.crt as the only trust anchor, for a TLS server name. */
static int verify_chain(X509 *ca, X509 *leaf, const char *host)
{
    X509_STORE *store = X509_STORE_new();
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    int ok;

    ck_assert_ptr_nonnull(store);
    ck_assert_ptr_nonnull(ctx);
    ck_assert_int_eq(X509_STORE_add_cert(store, ca), 1);
    ck_assert_int_eq(X509_STORE_CTX_init(ctx, store, leaf, NULL), 1);
    X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
    if (host)
        X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(ctx), host, 0);
    ok = X509_verify_cert(ctx);
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(store);
    return ok;
}

static void teardown(void)
{
    remove_tmpdir();
}

START_TEST(ecdsa_default_chain_verifies_for_every_service_name)
{
    struct tg_certs_opts o;
    char *bundle = NULL;
    static const char *names[] = {"trainguard",
                                  "trainguard.trainguard",
                                  "trainguard.trainguard.svc",
                                  "trainguard.trainguard.svc.cluster.local",
                                  "localhost",
                                  "trainguard.example.com"};

    make_tmpdir();
    default_opts(&o);
    generate_ok(&o, &bundle);
    X509 *ca = load_cert("ca.crt"), *leaf = load_cert("tls.crt");
    EVP_PKEY *key = load_key("tls.key"), *ca_key = load_key("ca.key");

    ck_assert_int_eq(verify_chain(ca, leaf, "trainguard.trainguard.svc"), 1);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        ck_assert_msg(X509_check_host(leaf, names[i], 0, 0, NULL) == 1, "SAN %s", names[i]);
    ck_assert_int_ne(X509_check_host(leaf, "other.trainguard.svc", 0, 0, NULL), 1);
    ck_assert_int_eq(X509_check_ip_asc(leaf, "127.0.0.1", 0), 1);
    ck_assert_int_eq(X509_check_ip_asc(leaf, "::1", 0), 1);
    ck_assert_int_ne(X509_check_ip_asc(leaf, "10.0.0.1", 0), 1);

    ck_assert_int_eq(EVP_PKEY_get_base_id(key), EVP_PKEY_EC);
    ck_assert_int_eq(EVP_PKEY_get_bits(key), 256);
    ck_assert_int_eq(EVP_PKEY_get_base_id(ca_key), EVP_PKEY_EC);
    ck_assert_int_eq(X509_check_private_key(leaf, key), 1);
    ck_assert_int_eq(X509_check_private_key(ca, ca_key), 1);
    ck_assert_int_ne(X509_check_private_key(leaf, ca_key), 1);

    /* the caBundle is the base64 of the ca.crt file, on one line */
    static char pem[8192];
    static unsigned char decoded[8192];
    size_t n = slurp("ca.crt", pem, sizeof(pem));
    ck_assert_ptr_nonnull(bundle);
    ck_assert_ptr_null(strchr(bundle, '\n'));
    int dn = EVP_DecodeBlock(decoded, (const unsigned char *)bundle, (int)strlen(bundle));
    ck_assert_int_ge(dn, (int)n);
    ck_assert_int_eq(memcmp(decoded, pem, n), 0);

    free(bundle);
    EVP_PKEY_free(key);
    EVP_PKEY_free(ca_key);
    X509_free(leaf);
    X509_free(ca);
}
END_TEST

START_TEST(extensions_follow_the_ca_and_serving_profiles)
{
    struct tg_certs_opts o;
    char cn[128];

    make_tmpdir();
    default_opts(&o);
    generate_ok(&o, NULL);
    X509 *ca = load_cert("ca.crt"), *leaf = load_cert("tls.crt");

    /* CA: basicConstraints CA:TRUE critical, keyCertSign + cRLSign, SKI */
    ck_assert_int_eq(X509_check_ca(ca), 1);
    int crit = -1;
    BASIC_CONSTRAINTS *bc = X509_get_ext_d2i(ca, NID_basic_constraints, &crit, NULL);
    ck_assert_ptr_nonnull(bc);
    ck_assert_int_eq(crit, 1);
    ck_assert(bc->ca);
    BASIC_CONSTRAINTS_free(bc);
    ck_assert_uint_eq(X509_get_key_usage(ca), KU_KEY_CERT_SIGN | KU_CRL_SIGN);
    ck_assert_ptr_nonnull(X509_get0_subject_key_id(ca));
    ck_assert_int_eq(X509_check_issued(ca, ca), X509_V_OK);

    /* serving: CA:FALSE, digitalSignature only for ECDSA, serverAuth, AKI = CA's SKI */
    ck_assert_int_eq(X509_check_ca(leaf), 0);
    bc = X509_get_ext_d2i(leaf, NID_basic_constraints, &crit, NULL);
    ck_assert_ptr_nonnull(bc);
    ck_assert(!bc->ca);
    BASIC_CONSTRAINTS_free(bc);
    ck_assert_uint_eq(X509_get_key_usage(leaf), KU_DIGITAL_SIGNATURE);
    ck_assert_uint_eq(X509_get_extended_key_usage(leaf), XKU_SSL_SERVER);
    ck_assert_ptr_nonnull(X509_get0_authority_key_id(leaf));
    ck_assert_int_eq(
        ASN1_OCTET_STRING_cmp(X509_get0_authority_key_id(leaf), X509_get0_subject_key_id(ca)), 0);
    X509_NAME_get_text_by_NID(X509_get_subject_name(leaf), NID_commonName, cn, sizeof(cn));
    ck_assert_str_eq(cn, "trainguard.trainguard.svc");
    ck_assert_int_eq(X509_get_signature_nid(leaf), NID_ecdsa_with_SHA256);

    /* random serials of 127 bits, different for CA and leaf */
    BIGNUM *s1 = ASN1_INTEGER_to_BN(X509_get0_serialNumber(ca), NULL);
    BIGNUM *s2 = ASN1_INTEGER_to_BN(X509_get0_serialNumber(leaf), NULL);
    ck_assert_int_eq(BN_num_bits(s1), 127);
    ck_assert_int_eq(BN_num_bits(s2), 127);
    ck_assert(!BN_is_negative(s1));
    ck_assert_int_ne(BN_cmp(s1, s2), 0);
    BN_free(s1);
    BN_free(s2);
    X509_free(leaf);
    X509_free(ca);
}
END_TEST

START_TEST(validity_is_backdated_and_the_ca_outlives_the_leaf)
{
    struct tg_certs_opts o;
    int days, secs;

    make_tmpdir();
    default_opts(&o);
    o.days = 30;
    generate_ok(&o, NULL);
    X509 *ca = load_cert("ca.crt"), *leaf = load_cert("tls.crt");

    /* notBefore one hour back */
    ck_assert_int_eq(ASN1_TIME_diff(&days, &secs, X509_get0_notBefore(leaf), NULL), 1);
    ck_assert_int_eq(days, 0);
    ck_assert_int_ge(secs, TG_CERTS_BACKDATE_SECONDS - 60);
    ck_assert_int_le(secs, TG_CERTS_BACKDATE_SECONDS + 60);
    /* notAfter 30 days from now */
    ck_assert_int_eq(ASN1_TIME_diff(&days, &secs, NULL, X509_get0_notAfter(leaf)), 1);
    ck_assert(days == 30 || (days == 29 && secs > 86000));
    ck_assert_int_eq(ASN1_TIME_diff(&days, &secs, NULL, X509_get0_notAfter(ca)), 1);
    ck_assert_int_ge(days, TG_CERTS_CA_DAYS - 1);
    ck_assert_int_lt(ASN1_TIME_compare(X509_get0_notAfter(leaf), X509_get0_notAfter(ca)), 0);
    X509_free(leaf);
    X509_free(ca);
}
END_TEST

START_TEST(rsa_key_type_makes_2048_bit_keys_with_key_encipherment)
{
    struct tg_certs_opts o;

    make_tmpdir();
    default_opts(&o);
    o.key_type = TG_KEY_RSA;
    generate_ok(&o, NULL);
    X509 *ca = load_cert("ca.crt"), *leaf = load_cert("tls.crt");
    EVP_PKEY *key = load_key("tls.key"), *ca_key = load_key("ca.key");

    ck_assert_int_eq(EVP_PKEY_get_base_id(key), EVP_PKEY_RSA);
    ck_assert_int_eq(EVP_PKEY_get_bits(key), 2048);
    ck_assert_int_eq(EVP_PKEY_get_base_id(ca_key), EVP_PKEY_RSA);
    ck_assert_uint_eq(X509_get_key_usage(leaf), KU_DIGITAL_SIGNATURE | KU_KEY_ENCIPHERMENT);
    ck_assert_int_eq(X509_get_signature_nid(leaf), NID_sha256WithRSAEncryption);
    ck_assert_int_eq(verify_chain(ca, leaf, "trainguard.trainguard.svc.cluster.local"), 1);
    ck_assert_int_eq(X509_check_private_key(leaf, key), 1);
    EVP_PKEY_free(key);
    EVP_PKEY_free(ca_key);
    X509_free(leaf);
    X509_free(ca);
}
END_TEST

static void assert_mode(const char *name, mode_t want)
{
    struct stat st;
    ck_assert_int_eq(stat(in_out(name), &st), 0);
    ck_assert_msg((st.st_mode & 0777) == want, "%s mode %o, want %o", name,
                  (unsigned)(st.st_mode & 0777), (unsigned)want);
}

START_TEST(keys_are_mode_0600_also_when_forced)
{
    struct tg_certs_opts o;
    struct stat st;
    mode_t old = umask(022);

    make_tmpdir();
    snprintf(outdir, sizeof(outdir), "%s/a/b/out", tmpdir); /* parents are created */
    default_opts(&o);
    generate_ok(&o, NULL);
    assert_mode("ca.key", 0600);
    assert_mode("tls.key", 0600);
    assert_mode("ca.crt", 0644);
    assert_mode("tls.crt", 0644);
    ck_assert_int_eq(stat(outdir, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0700);

    o.force = true;
    generate_ok(&o, NULL);
    assert_mode("ca.key", 0600);
    assert_mode("tls.key", 0600);
    assert_mode("tls.crt", 0644);
    umask(old);
}
END_TEST

START_TEST(existing_files_are_refused_by_name_without_force)
{
    struct tg_certs_opts o;
    char err[512] = "";
    static char before[8192], after[8192];

    make_tmpdir();
    default_opts(&o);
    generate_ok(&o, NULL);
    slurp("tls.crt", before, sizeof(before));

    ck_assert_int_eq(tg_certs_generate(&o, NULL, err, sizeof(err)), -EEXIST);
    ck_assert_msg(strstr(err, "ca.crt") && strstr(err, "--force"), "err: %s", err);
    slurp("tls.crt", after, sizeof(after));
    ck_assert_str_eq(before, after);

    /* only tls.key present: named, and nothing else is written */
    remove_tmpdir();
    make_tmpdir();
    ck_assert_int_eq(mkdir(outdir, 0700), 0);
    FILE *f = fopen(in_out("tls.key"), "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(tg_certs_generate(&o, NULL, err, sizeof(err)), -EEXIST);
    ck_assert_msg(strstr(err, "tls.key") != NULL, "err: %s", err);
    ck_assert_int_ne(access(in_out("ca.crt"), F_OK), 0);
    ck_assert_int_ne(access(in_out("ca.key"), F_OK), 0);
}
END_TEST

START_TEST(force_replaces_every_file_with_a_new_chain)
{
    struct tg_certs_opts o;
    static char ca1[8192], ca2[8192];

    make_tmpdir();
    default_opts(&o);
    generate_ok(&o, NULL);
    slurp("ca.crt", ca1, sizeof(ca1));
    o.force = true;
    generate_ok(&o, NULL);
    slurp("ca.crt", ca2, sizeof(ca2));
    ck_assert_str_ne(ca1, ca2);

    X509 *ca = load_cert("ca.crt"), *leaf = load_cert("tls.crt");
    ck_assert_int_eq(verify_chain(ca, leaf, "trainguard.trainguard.svc"), 1);
    X509_free(leaf);
    X509_free(ca);
    /* exactly the four files: no temporary file left behind */
    DIR *d = opendir(outdir);
    struct dirent *e;
    int n = 0;
    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    ck_assert_int_eq(n, 4);
}
END_TEST

START_TEST(long_names_keep_full_sans_and_a_short_cn)
{
    struct tg_certs_opts o;
    char cn[128], host[256];
    const char *svc = "s23456789012345678901234567890123456789012345678901234567890123";
    const char *ns = "n23456789012345678901234567890123456789012345678901234567890123";

    make_tmpdir();
    tg_certs_opts_init(&o);
    o.out_dir = outdir;
    o.service = svc;
    o.ns = ns;
    generate_ok(&o, NULL);
    X509 *leaf = load_cert("tls.crt");
    snprintf(host, sizeof(host), "%s.%s.svc.cluster.local", svc, ns);
    ck_assert_int_eq(X509_check_host(leaf, host, 0, 0, NULL), 1);
    X509_NAME_get_text_by_NID(X509_get_subject_name(leaf), NID_commonName, cn, sizeof(cn));
    ck_assert_str_eq(cn, svc);
    X509_free(leaf);
}
END_TEST

/* ---- bad input: tg_certs_validate ---- */

struct bad_opts_case {
    const char *name;
    const char *out_dir, *service, *ns, *dns, *ip;
    long days;
    int key_type;
};

static const struct bad_opts_case bad_opts[] = {
    {"no out dir", NULL, "svc", "ns", NULL, NULL, 365, 0},
    {"empty out dir", "", "svc", "ns", NULL, NULL, 365, 0},
    {"no service", "d", NULL, "ns", NULL, NULL, 365, 0},
    {"service with uppercase", "d", "Svc", "ns", NULL, NULL, 365, 0},
    {"service starting with digit", "d", "1svc", "ns", NULL, NULL, 365, 0},
    {"service with dot", "d", "svc.x", "ns", NULL, NULL, 365, 0},
    {"service too long", "d", "s234567890123456789012345678901234567890123456789012345678901234",
     "ns", NULL, NULL, 365, 0},
    {"no namespace", "d", "svc", NULL, NULL, NULL, 365, 0},
    {"namespace ending in dash", "d", "svc", "ns-", NULL, NULL, 365, 0},
    {"dns empty", "d", "svc", "ns", "", NULL, 365, 0},
    {"dns empty label", "d", "svc", "ns", "a..b", NULL, 365, 0},
    {"dns trailing dot", "d", "svc", "ns", "a.b.", NULL, 365, 0},
    {"dns underscore", "d", "svc", "ns", "a_b", NULL, 365, 0},
    {"dns inner wildcard", "d", "svc", "ns", "a.*.b", NULL, 365, 0},
    {"dns comma injection", "d", "svc", "ns", "a,IP:1.2.3.4", NULL, 365, 0},
    {"ip out of range", "d", "svc", "ns", NULL, "300.1.1.1", 365, 0},
    {"ip short", "d", "svc", "ns", NULL, "1.2.3", 365, 0},
    {"ip bad v6", "d", "svc", "ns", NULL, "::g", 365, 0},
    {"ip with cidr", "d", "svc", "ns", NULL, "10.0.0.0/8", 365, 0},
    {"days zero", "d", "svc", "ns", NULL, NULL, 0, 0},
    {"days negative", "d", "svc", "ns", NULL, NULL, -5, 0},
    {"days huge", "d", "svc", "ns", NULL, NULL, TG_CERTS_MAX_DAYS + 1, 0},
    {"unknown key type", "d", "svc", "ns", NULL, NULL, 365, 7},
};

START_TEST(bad_options_are_rejected_before_any_file_is_touched)
{
    const struct bad_opts_case *c = &bad_opts[_i];
    struct tg_certs_opts o;
    char err[512] = "";
    const char *dns = c->dns, *ip = c->ip;

    tg_certs_opts_init(&o);
    o.out_dir = c->out_dir;
    o.service = c->service;
    o.ns = c->ns;
    o.dns = &dns;
    o.ndns = c->dns ? 1 : 0;
    o.ips = &ip;
    o.nips = c->ip ? 1 : 0;
    o.days = c->days;
    o.key_type = (enum tg_key_type)c->key_type;
    ck_assert_msg(tg_certs_validate(&o, err, sizeof(err)) == -EINVAL, "case %s", c->name);
    ck_assert_msg(err[0] != '\0', "case %s: no message", c->name);
    ck_assert_msg(tg_certs_generate(&o, NULL, err, sizeof(err)) == -EINVAL, "case %s", c->name);
    ck_assert_int_ne(access("d", F_OK), 0);
}
END_TEST

START_TEST(good_names_are_accepted)
{
    struct tg_certs_opts o;
    char err[512] = "";
    const char *dns[] = {"localhost", "*.example.com", "host-1.Example.COM", "a"};
    const char *ips[] = {"10.1.2.3", "fd00::1", "::ffff:10.0.0.1"};

    tg_certs_opts_init(&o);
    o.out_dir = "d";
    o.service = "a";
    o.ns = "0ns";
    o.dns = dns;
    o.ndns = 4;
    o.ips = ips;
    o.nips = 3;
    o.days = TG_CERTS_MAX_DAYS;
    ck_assert_msg(tg_certs_validate(&o, err, sizeof(err)) == 0, "%s", err);
    o.days = 1;
    ck_assert_msg(tg_certs_validate(&o, err, sizeof(err)) == 0, "%s", err);
}
END_TEST

/* ---- the command line ---- */

struct argv_case {
    const char *args[12];
    int want;
};

static const struct argv_case argv_cases[] = {
    {{"certs"}, 2},
    {{"certs", "--service", "x", "--namespace", "y"}, 2},
    {{"certs", "--out-dir", "OUT", "--namespace", "y"}, 2},
    {{"certs", "--out-dir", "OUT", "--service", "x"}, 2},
    {{"certs", "--out-dir", "OUT", "--service", "x", "--namespace", "y", "--bogus"}, 2},
    {{"certs", "--out-dir", "OUT", "--service", "x", "--namespace", "y", "stray"}, 2},
    {{"certs", "--out-dir", "OUT", "--service", "x", "--namespace", "y", "--ip"}, 2},
    {{"certs", "--out-dir", "OUT", "--service", "x", "--namespace", "y", "--ip", "1.2.3.4.5"}, 2},
    {{"certs", "--out-dir", "OUT", "--service", "x", "--namespace", "y", "--days", "abc"}, 2},
    {{"certs", "--out-dir", "OUT", "--service", "x", "--namespace", "y", "--days", "10x"}, 2},
    {{"certs", "--out-dir", "OUT", "--service", "x", "--namespace", "y", "--days", ""}, 2},
    {{"certs", "--out-dir", "OUT", "--service", "x", "--namespace", "y", "--days",
      "99999999999999999999999"},
     2},
    {{"certs", "--out-dir", "OUT", "--service", "x", "--namespace", "y", "--days", "-1"}, 2},
    {{"certs", "--out-dir", "OUT", "--service", "x", "--namespace", "y", "--key-type", "dsa"}, 2},
    {{"certs", "--out-dir", "OUT", "--service", "x", "--namespace", "y", "--forcefully"}, 2},
    {{"certs", "--out-dir=OUT", "--service=x", "--namespace=y", "--dns=bad_name"}, 2},
    {{"certs", "--help"}, 0},
    {{"certs", "--out-dir", "OUT", "-h"}, 0},
    {{"certs", "--out-dir=OUT", "--service=x", "--namespace=y", "--dns=localhost", "--ip=::1",
      "--key-type=rsa", "--days=7"},
     0},
    {{"certs", "--out-dir", "OUT", "--service", "x", "--namespace", "y", "--ip", "127.0.0.1",
      "--dns", "localhost"},
     0},
};

/* Runs the command with stdout and stderr sent to /dev/null (the usage text and the caBundle would
 * only clutter the test log); the descriptors are restored, also in CK_FORK=no runs. */
static int run_quiet(int argc, char **argv)
{
    int saved_out, saved_err, null_fd, ret;

    fflush(stdout);
    fflush(stderr);
    saved_out = dup(1);
    saved_err = dup(2);
    null_fd = open("/dev/null", O_WRONLY);
    ck_assert(saved_out >= 0 && saved_err >= 0 && null_fd >= 0);
    dup2(null_fd, 1);
    dup2(null_fd, 2);
    ret = tg_cmd_certs(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    close(null_fd);
    return ret;
}

START_TEST(command_line_exit_codes)
{
    const struct argv_case *c = &argv_cases[_i];
    char *argv[13] = {0};
    char buf[12][400];
    int argc = 0;

    make_tmpdir();
    for (; argc < 12 && c->args[argc]; argc++) {
        /* OUT stands for the per-test output directory */
        const char *a = c->args[argc];
        const char *hit = strstr(a, "OUT");
        if (hit)
            snprintf(buf[argc], sizeof(buf[argc]), "%.*s%s%s", (int)(hit - a), a, outdir, hit + 3);
        else
            snprintf(buf[argc], sizeof(buf[argc]), "%s", a);
        argv[argc] = buf[argc];
    }
    int got = run_quiet(argc, argv);
    ck_assert_msg(got == c->want, "case %d (%s ...): exit %d, want %d", _i, argv[1] ? argv[1] : "",
                  got, c->want);
    if (c->want == 0 && access(in_out("tls.crt"), F_OK) == 0) {
        /* second run without --force is refused with exit 1, and succeeds with it */
        ck_assert_int_eq(run_quiet(argc, argv), 1);
        argv[argc] = (char *)"--force";
        ck_assert_int_eq(run_quiet(argc + 1, argv), 0);
    }
}
END_TEST

Suite *tg_test_certs_suite(void);
Suite *tg_test_certs_suite(void)
{
    Suite *s = suite_create("certs");
    TCase *tc = tcase_create("generate");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, ecdsa_default_chain_verifies_for_every_service_name);
    tcase_add_test(tc, extensions_follow_the_ca_and_serving_profiles);
    tcase_add_test(tc, validity_is_backdated_and_the_ca_outlives_the_leaf);
    tcase_add_test(tc, rsa_key_type_makes_2048_bit_keys_with_key_encipherment);
    tcase_add_test(tc, keys_are_mode_0600_also_when_forced);
    tcase_add_test(tc, existing_files_are_refused_by_name_without_force);
    tcase_add_test(tc, force_replaces_every_file_with_a_new_chain);
    tcase_add_test(tc, long_names_keep_full_sans_and_a_short_cn);
    suite_add_tcase(s, tc);

    TCase *bad = tcase_create("input");
    tcase_add_checked_fixture(bad, NULL, teardown);
    tcase_set_timeout(bad, 60);
    tcase_add_loop_test(bad, bad_options_are_rejected_before_any_file_is_touched, 0,
                        (int)(sizeof(bad_opts) / sizeof(bad_opts[0])));
    tcase_add_test(bad, good_names_are_accepted);
    tcase_add_loop_test(bad, command_line_exit_codes, 0,
                        (int)(sizeof(argv_cases) / sizeof(argv_cases[0])));
    suite_add_tcase(s, bad);
    return s;
}

/*
 * Optional signature recovery through the system's libsecp256k1 (Debian: libsecp256k1-dev,
 * 0.2 or later). Recovery is the largest single cost of a submission; libsecp256k1 0.2 (safegcd
 * inversions) recovers ~25% faster than the 2019 library inside the npm `secp256k1` package.
 *
 * One function, the same contract as the npm package's raw addon, so the decoder calls either:
 *   ecdsaRecover(out65: Uint8Array, sig64: Uint8Array, recid: number, msg32: Uint8Array) -> number
 * 0 on success (out65 = the uncompressed public key), 1 when the signature does not parse
 * (r or s out of range), 2 when recovery fails, 3 on wrong argument types or sizes.
 *
 * Built by scripts/build-secp256k1.sh; used when the configuration says crypto.secp256k1 =
 * "system".
 */
#include <node_api.h>
#include <secp256k1.h>
#include <secp256k1_recovery.h>

static secp256k1_context *ctx;

static int bytes(napi_env env, napi_value v, size_t want, unsigned char **data) {
  napi_typedarray_type type;
  size_t length;
  void *p;
  if (napi_get_typedarray_info(env, v, &type, &length, &p, NULL, NULL) != napi_ok) return 0;
  if (type != napi_uint8_array || length != want) return 0;
  *data = p;
  return 1;
}

static napi_value recover(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  unsigned char *out, *sig, *msg;
  int32_t recid = -1;
  int rc = 3;
  secp256k1_ecdsa_recoverable_signature s;
  secp256k1_pubkey pk;
  napi_value result;

  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == napi_ok && argc == 4 &&
      bytes(env, argv[0], 65, &out) && bytes(env, argv[1], 64, &sig) && bytes(env, argv[3], 32, &msg) &&
      napi_get_value_int32(env, argv[2], &recid) == napi_ok && recid >= 0 && recid <= 3) {
    if (!secp256k1_ecdsa_recoverable_signature_parse_compact(ctx, &s, sig, recid)) rc = 1;
    else if (!secp256k1_ecdsa_recover(ctx, &pk, &s, msg)) rc = 2;
    else {
      size_t len = 65;
      secp256k1_ec_pubkey_serialize(ctx, out, &len, &pk, SECP256K1_EC_UNCOMPRESSED);
      rc = 0;
    }
  }
  napi_create_int32(env, rc, &result);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (ctx == NULL) ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
  napi_create_function(env, "ecdsaRecover", NAPI_AUTO_LENGTH, recover, NULL, &fn);
  napi_set_named_property(env, exports, "ecdsaRecover", fn);
  return exports;
}

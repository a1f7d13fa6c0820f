/*
 * Stage probes for the profiler (docs/performance.md, "The profiler"): SLOTS exported functions,
 * each its own symbol (txgate_probe_NN), each calling its first argument with its second. Under
 * valgrind's callgrind a probe's inclusive count is what the function it called cost, on the
 * request's own path, whatever that function called in turn (JIT code has no symbols; these do).
 * txgate_probe_calib(probe, fn) calls probe(fn, undefined): what the profiler measures a probe's
 * own cost by, on both sides of the call (src/pipeline/probes.ts). Built by scripts/build-probe.sh;
 * loaded only where TXGATE_STAGE_PROBES names it.
 */
#include <node_api.h>

#define SLOTS 64

#define PROBE(n)                                                                                  \
  __attribute__((noinline, visibility("default"))) napi_value txgate_probe_##n(napi_env env,    \
                                                                               napi_callback_info info) { \
    size_t argc = 2;                                                                              \
    napi_value argv[2];                                                                           \
    napi_value out = NULL;                                                                        \
    napi_value undef;                                                                             \
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) return NULL; \
    napi_get_undefined(env, &undef);                                                              \
    if (napi_call_function(env, undef, argv[0], 1, &argv[1], &out) != napi_ok) return NULL;      \
    return out;                                                                                   \
  }
#define P8(a) PROBE(a##0) PROBE(a##1) PROBE(a##2) PROBE(a##3) PROBE(a##4) PROBE(a##5) PROBE(a##6) PROBE(a##7)
P8(0) P8(1) P8(2) P8(3) P8(4) P8(5) P8(6) P8(7)

#define REF(n) txgate_probe_##n,
#define R8(a) REF(a##0) REF(a##1) REF(a##2) REF(a##3) REF(a##4) REF(a##5) REF(a##6) REF(a##7)
static const napi_callback probes[SLOTS] = {R8(0) R8(1) R8(2) R8(3) R8(4) R8(5) R8(6) R8(7)};

__attribute__((noinline, visibility("default"))) napi_value txgate_probe_calib(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[3];
  napi_value out = NULL;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) return NULL;
  napi_get_undefined(env, &argv[2]);
  if (napi_call_function(env, argv[2], argv[0], 2, &argv[1], &out) != napi_ok) return NULL;
  return out;
}

NAPI_MODULE_INIT() {
  napi_value slots, calib, count;
  napi_create_array_with_length(env, SLOTS, &slots);
  for (unsigned i = 0; i < SLOTS; i++) {
    napi_value f;
    napi_create_function(env, NULL, 0, probes[i], NULL, &f);
    napi_set_element(env, slots, i, f);
  }
  napi_create_function(env, NULL, 0, txgate_probe_calib, NULL, &calib);
  napi_create_uint32(env, SLOTS, &count);
  napi_set_named_property(env, exports, "slots", slots);
  napi_set_named_property(env, exports, "calib", calib);
  napi_set_named_property(env, exports, "count", count);
  return exports;
}

/*
 * The tree-sitter runtime for fleet.graph._native: the vendored third_party/tree-sitter/src
 * (unmodified, see third_party/tree-sitter/VENDORED.md) compiled as one unit, the way its
 * lib.c does, minus wasm_store.c: fleet loads grammars from their Python packages, never from
 * Wasm, so the runtime gets the no-op Wasm functions that wasm_store.c defines when
 * TREE_SITTER_FEATURE_WASM is off (the parser and the language loader still call them).
 */
#include "alloc.c"
#include "get_changed_ranges.c"
#include "language.c"
#include "lexer.c"
#include "node.c"
#include "parser.c"
#include "point.c"
#include "query.c"
#include "stack.c"
#include "subtree.c"
#include "tree_cursor.c"
#include "tree.c"

#ifdef TREE_SITTER_FEATURE_WASM
#error "fleet.graph._native is built without Wasm support"
#endif

void ts_wasm_store_delete(TSWasmStore *self) { (void)self; }
bool ts_wasm_store_start(TSWasmStore *self, TSLexer *lexer, const TSLanguage *language) {
  (void)self; (void)lexer; (void)language;
  return false;
}
void ts_wasm_store_reset(TSWasmStore *self) { (void)self; }
bool ts_wasm_store_call_lex_main(TSWasmStore *self, TSStateId state) {
  (void)self; (void)state;
  return false;
}
bool ts_wasm_store_call_lex_keyword(TSWasmStore *self, TSStateId state) {
  (void)self; (void)state;
  return false;
}
uint32_t ts_wasm_store_call_scanner_create(TSWasmStore *self) { (void)self; return 0; }
void ts_wasm_store_call_scanner_destroy(TSWasmStore *self, uint32_t scanner_address) {
  (void)self; (void)scanner_address;
}
bool ts_wasm_store_call_scanner_scan(TSWasmStore *self, uint32_t scanner_address,
                                     uint32_t valid_tokens_ix) {
  (void)self; (void)scanner_address; (void)valid_tokens_ix;
  return false;
}
uint32_t ts_wasm_store_call_scanner_serialize(TSWasmStore *self, uint32_t scanner_address,
                                              char *buffer) {
  (void)self; (void)scanner_address; (void)buffer;
  return 0;
}
void ts_wasm_store_call_scanner_deserialize(TSWasmStore *self, uint32_t scanner_address,
                                            const char *buffer, unsigned length) {
  (void)self; (void)scanner_address; (void)buffer; (void)length;
}
void ts_wasm_language_retain(const TSLanguage *self) { (void)self; }
void ts_wasm_language_release(const TSLanguage *self) { (void)self; }
bool ts_wasm_store_has_error(const TSWasmStore *self) { (void)self; return false; }
bool ts_language_is_wasm(const TSLanguage *self) { (void)self; return false; }

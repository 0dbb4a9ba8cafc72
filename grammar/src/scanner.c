/*
 * External scanner for the MLIR grammar.
 *
 * Tokens that need more look-ahead than the generated lexer has:
 *   FALLBACK_END          zero-width end of an operation parsed by the fallback
 *                         rule: at `}`, at end of input, or at a line break whose
 *                         next line does not visibly continue the operation.
 *   DIALECT_BODY          `<...>` right after `!dialect.type` / `#dialect.attr`,
 *                         with balanced brackets and strings (opaque content).
 *   FALLBACK_REGION_OPEN  a `{` inside a fallback operation that opens a region,
 *   FALLBACK_DICT_OPEN    or one that opens an attribute dictionary,
 *   FALLBACK_BRACE_OPEN   or one that opens any other balanced group
 *                         (`ops{["func.func"]}`, `{[0, 1], [2]}`).
 *   REGION_END_OF_INPUT   zero-width: the input ends (after spaces and comments)
 *                         where a region could close.
 *   LEFT_ARROW            `<-` (not `<` before a negative number: `dense<-1>`).
 *   ERROR_SENTINEL        never valid during normal parsing; when the parser asks
 *                         for it, it is recovering from an error and the scanner
 *                         stays out of the way.
 */
#include "tree_sitter/parser.h"

#include <stdbool.h>
#include <string.h>

enum TokenType {
  FALLBACK_END,
  DIALECT_BODY,
  FALLBACK_REGION_OPEN,
  FALLBACK_DICT_OPEN,
  ERROR_SENTINEL,
  FALLBACK_BRACE_OPEN,
  REGION_END_OF_INPUT,
  LEFT_ARROW,
};

#define MAX_NESTING 256
#define MAX_WORD 32

void *tree_sitter_mlir_external_scanner_create(void) { return NULL; }
void tree_sitter_mlir_external_scanner_destroy(void *payload) { (void)payload; }
unsigned tree_sitter_mlir_external_scanner_serialize(void *payload, char *buffer) {
  (void)payload;
  (void)buffer;
  return 0;
}
void tree_sitter_mlir_external_scanner_deserialize(void *payload, const char *buffer,
                                                   unsigned length) {
  (void)payload;
  (void)buffer;
  (void)length;
}

static void advance(TSLexer *lexer) { lexer->advance(lexer, false); }
static void skip(TSLexer *lexer) { lexer->advance(lexer, true); }

static bool is_horizontal_space(int32_t c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }
static bool is_space(int32_t c) { return is_horizontal_space(c) || c == '\n'; }
static bool is_id_start(int32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_id_char(int32_t c) {
  return is_id_start(c) || (c >= '0' && c <= '9') || c == '$' || c == '.';
}

/* Consume a string literal starting at the opening quote. */
static bool scan_string(TSLexer *lexer) {
  advance(lexer); /* opening quote */
  while (!lexer->eof(lexer)) {
    int32_t c = lexer->lookahead;
    if (c == '"') {
      advance(lexer);
      return true;
    }
    if (c == '\n') return false;
    if (c == '\\') advance(lexer);
    advance(lexer);
  }
  return false;
}

/* `<...>` with nested brackets; `->` does not close an angle bracket. */
static bool scan_dialect_body(TSLexer *lexer) {
  char stack[MAX_NESTING];
  int depth = 0;
  int32_t previous = 0;
  while (!lexer->eof(lexer)) {
    int32_t c = lexer->lookahead;
    if (c == '"') {
      if (!scan_string(lexer)) return false;
      previous = '"';
      continue;
    }
    if (c == '<' || c == '(' || c == '[' || c == '{') {
      if (depth == MAX_NESTING) return false;
      stack[depth++] = c == '<' ? '>' : c == '(' ? ')' : c == '[' ? ']' : '}';
    } else if (c == '>' && previous == '-') {
      /* an arrow inside the body */
    } else if (c == '>' || c == ')' || c == ']' || c == '}') {
      if (depth == 0 || stack[depth - 1] != c) return false;
      depth--;
      if (depth == 0) {
        advance(lexer);
        lexer->mark_end(lexer);
        return true;
      }
    }
    previous = c;
    advance(lexer);
  }
  return false;
}

/* Skip a `//` comment to the end of its line (the lexer is at the first '/'). */
static void skip_comment_line(TSLexer *lexer) {
  while (!lexer->eof(lexer) && lexer->lookahead != '\n') skip(lexer);
}

/* Skip whitespace and comments; returns false if a lone '/' was found. */
static void skip_space_and_comments(TSLexer *lexer, bool *saw_newline) {
  for (;;) {
    while (!lexer->eof(lexer) && is_space(lexer->lookahead)) {
      if (lexer->lookahead == '\n') *saw_newline = true;
      skip(lexer);
    }
    if (lexer->lookahead != '/') return;
    skip(lexer);
    if (lexer->lookahead != '/') return; /* not a comment: leave it */
    skip_comment_line(lexer);
  }
}

static int read_word(TSLexer *lexer, char *word) {
  int length = 0;
  while (!lexer->eof(lexer) && is_id_char(lexer->lookahead)) {
    if (length < MAX_WORD - 1) word[length] = (char)lexer->lookahead;
    length++;
    skip(lexer);
  }
  word[length < MAX_WORD ? length : MAX_WORD - 1] = 0;
  return length;
}

static const char *const CONTINUATION_WORDS[] = {
    "attributes", "to", "step", "iter_args", "into", "by", "else", "reduce", "ins",
    "outs", "from", "with", "do", "otherwise", "init", "in", "out", "case", "default",
    "then", "output_shape", "offset", "sizes", "strides", "permutation", "dimensions",
    "target", "at", "on", "inner_dims_pos", "inner_tiles", "outer_dims_perm", "unsigned",
    "index", "none", "memref", "tensor", "vector", "complex", "tuple", "affine_map",
    "affine_set", "dense", "sparse", "array", "strided", "loc", "true", "false", "unit",
    "bf16", "tf32", "symbol", "threads", "blocks", "clusters", NULL,
};

static bool is_type_word(const char *word) {
  const char *p = word;
  if (*p == 's' || *p == 'u') p++;
  if (*p == 'i' || *p == 'f') {
    p++;
    if (*p < '0' || *p > '9') return false;
    while (*p >= '0' && *p <= '9') p++;
    return *p == 0 || word[0] == 'f';
  }
  return false;
}

static bool is_continuation_word(const char *word) {
  for (int i = 0; CONTINUATION_WORDS[i]; i++) {
    if (strcmp(word, CONTINUATION_WORDS[i]) == 0) return true;
  }
  return is_type_word(word);
}

typedef enum { BRACE_REGION, BRACE_DICTIONARY, BRACE_GROUP } BraceKind;

static bool starts_result_list(TSLexer *lexer);

/*
 * The lexer is right after a `{` of a fallback operation. Decide what it opens:
 * an attribute dictionary (`{name = ...}`, `{unit}`, `{"key" = ...}`), a region
 * (operations, `%r = ...`, `^bb0(...):`, or nothing), or another balanced group
 * (`{num = %n : i32}`: an SSA value is no attribute, so not a dictionary).
 */
static BraceKind classify_brace(TSLexer *lexer) {
  bool saw_newline = false;
  skip_space_and_comments(lexer, &saw_newline);
  int32_t c = lexer->lookahead;
  if (c == '^' || c == '}' || lexer->eof(lexer)) return BRACE_REGION;
  if (c == '%') return starts_result_list(lexer) ? BRACE_REGION : BRACE_GROUP;
  if (c == '"') {
    if (!scan_string(lexer)) return BRACE_REGION;
  } else if (is_id_start(c)) {
    char word[MAX_WORD];
    read_word(lexer, word);
  } else {
    return BRACE_GROUP;
  }
  bool newline_after = false;
  skip_space_and_comments(lexer, &newline_after);
  c = lexer->lookahead;
  if (c == '=') {
    skip(lexer);
    skip_space_and_comments(lexer, &newline_after);
    return lexer->lookahead == '%' ? BRACE_GROUP : BRACE_DICTIONARY;
  }
  if (c == ',') return BRACE_DICTIONARY;
  if (c == '}') return !newline_after && !saw_newline ? BRACE_DICTIONARY : BRACE_REGION;
  return BRACE_REGION;
}

/* Skip a balanced `(...)` group (strings respected); false if it does not close. */
static bool skip_parens(TSLexer *lexer) {
  int depth = 0;
  while (!lexer->eof(lexer)) {
    int32_t c = lexer->lookahead;
    if (c == '"') {
      if (!scan_string(lexer)) return false;
      continue;
    }
    if (c == '(') depth++;
    if (c == ')' && --depth == 0) {
      skip(lexer);
      return true;
    }
    if (depth == 0) return false;
    skip(lexer);
  }
  return false;
}

static void skip_horizontal_space(TSLexer *lexer) {
  while (!lexer->eof(lexer) && is_horizontal_space(lexer->lookahead)) skip(lexer);
}

/* Skip an SSA name or a block name after its sigil. */
static void skip_name(TSLexer *lexer) {
  while (!lexer->eof(lexer) &&
         (is_id_char(lexer->lookahead) || lexer->lookahead == '-' || lexer->lookahead == '#'))
    skip(lexer);
}

/*
 * The lexer is at `%` at the start of a line. An operation starts there only
 * with its results: `%a, %b:2 = ...`. Anything else continues the operation
 * before (`%arg0, %arg1` after a multi-line attribute dictionary).
 */
static bool starts_result_list(TSLexer *lexer) {
  for (;;) {
    if (lexer->lookahead != '%') return false;
    skip(lexer);
    skip_name(lexer);
    skip_horizontal_space(lexer);
    if (lexer->lookahead == ':') {
      skip(lexer);
      skip_horizontal_space(lexer);
      if (lexer->lookahead < '0' || lexer->lookahead > '9') return false;
      while (!lexer->eof(lexer) && lexer->lookahead >= '0' && lexer->lookahead <= '9') skip(lexer);
      skip_horizontal_space(lexer);
    }
    if (lexer->lookahead == '=') return true;
    if (lexer->lookahead != ',') return false;
    skip(lexer);
    bool newline = false;
    skip_space_and_comments(lexer, &newline);
  }
}

/* At `^` at the start of a line: a block label (`^bb1(%a: i32):`) ends the operation. */
static bool starts_block_label(TSLexer *lexer) {
  skip(lexer);
  skip_name(lexer);
  skip_horizontal_space(lexer);
  if (lexer->lookahead == '(') {
    if (!skip_parens(lexer)) return false;
    skip_horizontal_space(lexer);
  }
  return lexer->lookahead == ':';
}

/* At `#` or `!` at the start of a line: an alias definition (`#map = ...`) ends it. */
static bool starts_alias_definition(TSLexer *lexer) {
  skip(lexer);
  skip_name(lexer);
  skip_horizontal_space(lexer);
  return lexer->lookahead == '=';
}

/*
 * The lexer is at a line break (or a comment) after a fallback operation.
 * Decide whether the next line continues it.
 */
static bool next_line_continues(TSLexer *lexer, bool *at_brace) {
  bool saw_newline = false;
  skip_space_and_comments(lexer, &saw_newline);
  if (lexer->eof(lexer)) return false;
  int32_t c = lexer->lookahead;
  *at_brace = c == '{';
  switch (c) {
    case '}':
      return false;
    case '{':
      /* `{-#` opens a resource block: a top-level item of its own. (The `{` is
         taken into the token: the brace token the caller returns starts there.) */
      advance(lexer);
      return lexer->lookahead != '-';
    case '"':
      /* `"dialect.op"(` starts a generic operation; another string continues. */
      if (!scan_string(lexer)) return false;
      skip_horizontal_space(lexer);
      return lexer->lookahead != '(';
    case '%':
      return !starts_result_list(lexer);
    case '^':
      return !starts_block_label(lexer);
    case '#': case '!':
      return !starts_alias_definition(lexer);
    default:
      break;
  }
  if (is_id_start(c)) {
    char word[MAX_WORD];
    read_word(lexer, word);
    if (is_continuation_word(word)) return true;
    /* An operation name has a dialect (`dialect.op`); a bare word starts one only
       in a dialect's default namespace (`return`, `yield %x`). A word followed by
       `(`, `<`, `[`, `=` or `:` is a keyword or an attribute name of the format. */
    if (strchr(word, '.') != NULL) return false;
    skip_horizontal_space(lexer);
    c = lexer->lookahead;
    /* `init {`, `combiner {`: a keyword and its region; `module {` is an op. */
    if (c == '{') return strcmp(word, "module") != 0;
    return c == '(' || c == '<' || c == '[' || c == '=' || c == ':';
  }
  return true;
}

bool tree_sitter_mlir_external_scanner_scan(void *payload, TSLexer *lexer, const bool *valid) {
  (void)payload;
  if (valid[ERROR_SENTINEL]) return false;

  if (valid[DIALECT_BODY] && lexer->lookahead == '<') {
    lexer->result_symbol = DIALECT_BODY;
    return scan_dialect_body(lexer);
  }

  if (valid[LEFT_ARROW]) {
    while (!lexer->eof(lexer) && is_horizontal_space(lexer->lookahead)) skip(lexer);
    if (lexer->lookahead == '<') {
      advance(lexer);
      if (lexer->lookahead != '-') return false;
      advance(lexer);
      int32_t c = lexer->lookahead;
      if ((c >= '0' && c <= '9') || c == '.') return false;
      lexer->mark_end(lexer);
      lexer->result_symbol = LEFT_ARROW;
      return true;
    }
  }

  bool want_end = valid[FALLBACK_END];
  bool want_brace =
      valid[FALLBACK_REGION_OPEN] || valid[FALLBACK_DICT_OPEN] || valid[FALLBACK_BRACE_OPEN];
  if (!want_end && !want_brace) {
    if (!valid[REGION_END_OF_INPUT]) return false;
    bool saw_newline = false;
    skip_space_and_comments(lexer, &saw_newline);
    if (!lexer->eof(lexer)) return false;
    lexer->mark_end(lexer);
    lexer->result_symbol = REGION_END_OF_INPUT;
    return true;
  }

  if (want_end) {
    while (!lexer->eof(lexer) && is_horizontal_space(lexer->lookahead)) skip(lexer);
  } else {
    /* Inside a group or after a separator: line breaks do not matter. */
    bool saw_newline = false;
    skip_space_and_comments(lexer, &saw_newline);
  }
  lexer->mark_end(lexer);

  if (want_end && (lexer->eof(lexer) || lexer->lookahead == '}' || lexer->lookahead == ';')) {
    lexer->result_symbol = FALLBACK_END;
    return true;
  }

  bool at_brace = lexer->lookahead == '{';
  bool brace_taken = false; /* (a `{` on the next line, already advanced over) */
  if (want_end && (lexer->lookahead == '\n' || lexer->lookahead == '/')) {
    if (lexer->lookahead == '/') {
      skip(lexer);
      if (lexer->lookahead != '/') return false; /* a stray '/', not a comment */
      skip_comment_line(lexer);
    }
    if (!next_line_continues(lexer, &at_brace)) {
      lexer->result_symbol = FALLBACK_END;
      return true;
    }
    if (!at_brace) return false;
    brace_taken = true;
  }

  if (at_brace && want_brace) {
    if (!brace_taken) advance(lexer);
    lexer->mark_end(lexer);
    BraceKind kind = classify_brace(lexer);
    enum TokenType preferred[3];
    if (kind == BRACE_DICTIONARY) {
      preferred[0] = FALLBACK_DICT_OPEN;
      preferred[1] = FALLBACK_BRACE_OPEN;
      preferred[2] = FALLBACK_REGION_OPEN;
    } else if (kind == BRACE_GROUP) {
      preferred[0] = FALLBACK_BRACE_OPEN;
      preferred[1] = FALLBACK_REGION_OPEN;
      preferred[2] = FALLBACK_DICT_OPEN;
    } else {
      preferred[0] = FALLBACK_REGION_OPEN;
      preferred[1] = FALLBACK_BRACE_OPEN;
      preferred[2] = FALLBACK_DICT_OPEN;
    }
    for (int i = 0; i < 3; i++) {
      if (valid[preferred[i]]) {
        lexer->result_symbol = preferred[i];
        return true;
      }
    }
  }
  return false;
}

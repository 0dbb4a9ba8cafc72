-- Headless Neovim session driven by tests/editors/test_neovim.py.
-- Environment: AFFINE_REPO, AFFINE_FIXTURE, AFFINE_PARSER (compiled grammar),
-- AFFINE_SERVER_CMD (JSON list), AFFINE_OUT (where to write the JSON result).

local harness = dofile(os.getenv("AFFINE_REPO") .. "/tests/editors/nvim_harness.lua")

harness.run(function(out)
  harness.setup({ parser_path = os.getenv("AFFINE_PARSER") })
  local bufnr = harness.open_fixture()
  out.filetype = vim.bo[bufnr].filetype

  -- Tree-sitter: the grammar parses the buffer and the queries compile.
  local parser = vim.treesitter.get_parser(bufnr, "mlir")
  local tree = parser:parse()[1]
  out.tree_root = tree:root():type()
  local get_query = vim.treesitter.query and vim.treesitter.query.get_query or vim.treesitter.get_query
  for _, name in ipairs({ "highlights", "locals", "folds", "indents" }) do
    local query_ok = pcall(get_query, "mlir", name)
    out["query_" .. name] = query_ok
  end

  -- Diagnostics from the server arrive in vim.diagnostic.
  out.attached = harness.attached(bufnr)
  harness.wait(function()
    return #vim.diagnostic.get(bufnr) > 0
  end)
  out.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(out.diagnostics, { lnum = d.lnum, col = d.col, message = d.message, severity = d.severity })
  end

  -- A hover on the first affine.for answers.
  local line = vim.fn.search("affine.for", "w") - 1
  local col = vim.fn.col(".") - 1
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = { line = line, character = col },
  }
  local responses = vim.lsp.buf_request_sync(bufnr, "textDocument/hover", params, 20000) or {}
  for _, response in pairs(responses) do
    if response.result and response.result.contents then
      local contents = response.result.contents
      out.hover = type(contents) == "table" and (contents.value or vim.inspect(contents)) or contents
    end
    if response.err then
      out.hover_error = vim.inspect(response.err)
    end
  end
end)

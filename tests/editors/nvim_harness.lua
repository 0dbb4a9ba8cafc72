-- What every headless Neovim session of tests/editors/test_neovim.py shares:
-- the result table written as JSON to AFFINE_OUT when the session ends (with
-- `error` if the body raised), messages shown (vim.notify) recorded in
-- `out.notes`, the plugin set up from this checkout, and waits on the server.
-- A session script: local harness = dofile(os.getenv("AFFINE_REPO") ..
-- "/tests/editors/nvim_harness.lua"); harness.run(function(out) ... end)

local M = {}

--- Run `body(out)`, then write `out` to AFFINE_OUT and quit Neovim.
function M.run(body)
  local out = { notes = {} }
  vim.notify = function(message, level)
    table.insert(out.notes, { message = tostring(message), level = level or vim.NIL })
  end
  local ok, err = pcall(body, out)
  if not ok then
    out.error = tostring(err)
  end
  local handle = io.open(os.getenv("AFFINE_OUT"), "w")
  handle:write(vim.fn.json_encode(out))
  handle:close()
  vim.cmd("qall!")
end

--- The plugin of this checkout, set up with the server of AFFINE_SERVER_CMD and `options`.
function M.setup(options)
  vim.opt.runtimepath:prepend(os.getenv("AFFINE_REPO") .. "/editors/neovim")
  local config = { cmd = vim.fn.json_decode(os.getenv("AFFINE_SERVER_CMD")) }
  for key, value in pairs(options or {}) do
    config[key] = value
  end
  require("affine_lsp").setup(config)
end

--- AFFINE_FIXTURE opened in the current window; its buffer number.
function M.open_fixture()
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("AFFINE_FIXTURE")))
  return vim.api.nvim_get_current_buf()
end

--- Whether a language client attached to `bufnr` within 20 s.
function M.attached(bufnr)
  return vim.wait(20000, function()
    return #vim.lsp.buf_get_clients(bufnr) > 0
  end, 50)
end

--- Wait (20 s at most) until `predicate()` holds; whether it did.
function M.wait(predicate)
  return vim.wait(20000, predicate, 50)
end

return M

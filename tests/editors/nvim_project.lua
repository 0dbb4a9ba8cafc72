-- Headless Neovim session driven by tests/editors/test_neovim.py: a project file
-- written from Neovim (:write) reaches the server, which checks the MLIR buffer
-- again with it.
-- Environment: AFFINE_REPO, AFFINE_FIXTURE (an MLIR file), AFFINE_PROJECT (the
-- .affine-lsp.toml to write beside it), AFFINE_PROJECT_TEXT, AFFINE_SERVER_CMD,
-- AFFINE_OUT.

local out = {}
local function finish()
  local handle = io.open(os.getenv("AFFINE_OUT"), "w")
  handle:write(vim.fn.json_encode(out))
  handle:close()
  vim.cmd("qall!")
end

local function codes(bufnr)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(found, d.code or d.message)
  end
  return found
end

local ok, err = pcall(function()
  vim.opt.runtimepath:prepend(os.getenv("AFFINE_REPO") .. "/editors/neovim")
  require("affine_lsp").setup({
    cmd = vim.fn.json_decode(os.getenv("AFFINE_SERVER_CMD")),
    treesitter = false,
  })
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("AFFINE_FIXTURE")))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.wait(20000, function()
    return #vim.diagnostic.get(bufnr) > 0
  end, 50)
  out.before = codes(bufnr)

  vim.cmd("split " .. vim.fn.fnameescape(os.getenv("AFFINE_PROJECT")))
  vim.api.nvim_buf_set_lines(0, 0, -1, false, vim.split(os.getenv("AFFINE_PROJECT_TEXT"), "\n"))
  vim.cmd("write")
  vim.wait(20000, function()
    return #vim.diagnostic.get(bufnr) == 0
  end, 50)
  out.after = codes(bufnr)
end)
if not ok then
  out.error = tostring(err)
end
finish()

-- Headless Neovim session driven by tests/editors/test_neovim.py: a project file
-- written from Neovim (:write) reaches the server, which checks the MLIR buffer
-- again with it.
-- Environment: AFFINE_REPO, AFFINE_FIXTURE (an MLIR file), AFFINE_PROJECT (the
-- .affine-lsp.toml to write beside it), AFFINE_PROJECT_TEXT, AFFINE_SERVER_CMD,
-- AFFINE_OUT.

local harness = dofile(os.getenv("AFFINE_REPO") .. "/tests/editors/nvim_harness.lua")

local function codes(bufnr)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(found, d.code or d.message)
  end
  return found
end

harness.run(function(out)
  harness.setup({ treesitter = false })
  local bufnr = harness.open_fixture()
  harness.wait(function()
    return #vim.diagnostic.get(bufnr) > 0
  end)
  out.before = codes(bufnr)

  vim.cmd("split " .. vim.fn.fnameescape(os.getenv("AFFINE_PROJECT")))
  vim.api.nvim_buf_set_lines(0, 0, -1, false, vim.split(os.getenv("AFFINE_PROJECT_TEXT"), "\n"))
  vim.cmd("write")
  harness.wait(function()
    return #vim.diagnostic.get(bufnr) == 0
  end)
  out.after = codes(bufnr)
end)

-- Headless Neovim session driven by tests/editors/test_neovim.py: the stock
-- vim.lsp.buf.code_action() at a loop (Neovim 0.7 sends no triggerKind), the
-- menu answered by choosing the action whose title starts with AFFINE_CHOOSE.
-- Messages shown (vim.notify) are recorded in `notes`.
-- Environment: AFFINE_REPO, AFFINE_FIXTURE, AFFINE_SERVER_CMD (JSON list),
-- AFFINE_LINE (1-based line of the cursor), AFFINE_CHOOSE, AFFINE_OUT.

local harness = dofile(os.getenv("AFFINE_REPO") .. "/tests/editors/nvim_harness.lua")

harness.run(function(out)
  harness.setup({ treesitter = false })
  local bufnr = harness.open_fixture()
  out.attached = harness.attached(bufnr)
  -- The server has the document once it answered a request about it.
  harness.wait(function()
    local responses = vim.lsp.buf_request_sync(bufnr, "textDocument/documentSymbol", {
      textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    }, 1000) or {}
    for _, response in pairs(responses) do
      if response.result and #response.result > 0 then
        return true
      end
    end
    return false
  end)

  vim.api.nvim_win_set_cursor(0, { tonumber(os.getenv("AFFINE_LINE")), 4 })
  local choose = os.getenv("AFFINE_CHOOSE")
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  out.titles = {}
  out.disabled = {}
  vim.ui.select = function(items, opts, on_choice)
    local chosen = nil
    for _, item in ipairs(items) do
      local action = item[2]
      table.insert(out.titles, action.title)
      if action.disabled ~= nil then
        table.insert(out.disabled, action.title)
      end
      if chosen == nil and action.disabled == nil and action.title:sub(1, #choose) == choose then
        chosen = item
      end
    end
    out.chosen = chosen and chosen[2].title or vim.NIL
    on_choice(chosen)
  end
  vim.lsp.buf.code_action()
  out.changed = vim.wait(30000, function()
    return vim.api.nvim_buf_get_changedtick(bufnr) ~= tick
  end, 50)
  vim.wait(200) -- (edits of one action arrive together)
  out.lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, true)
end)

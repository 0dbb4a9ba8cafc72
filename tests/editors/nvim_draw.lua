-- Headless Neovim session for :AffineLspDraw, driven by tests/editors/test_neovim.py.
-- Environment: AFFINE_REPO, AFFINE_FIXTURE (a copy of tests/draw/fixtures/nests.mlir),
-- AFFINE_SERVER_CMD (JSON list), AFFINE_VIEWER (JSON list: a stub that records what it
-- opens), AFFINE_VIEWED (the file the stub writes), AFFINE_DIR (where the SVGs go),
-- AFFINE_OUT (where to write the JSON result).

local harness = dofile(os.getenv("AFFINE_REPO") .. "/tests/editors/nvim_harness.lua")

harness.run(function(out)
  harness.setup({
    filetypes = { "no-server-for-this-test" },
    treesitter = false,
    draw = {
      viewer = vim.fn.json_decode(os.getenv("AFFINE_VIEWER")),
      directory = os.getenv("AFFINE_DIR"),
    },
  })
  out.command_defined = vim.fn.exists(":AffineLspDraw") == 2
  out.draw_command = require("affine_lsp.draw").draw_command(vim.fn.json_decode(os.getenv("AFFINE_SERVER_CMD")))
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("AFFINE_FIXTURE")))

  -- An unsaved edit: the stencil runs %i to 12 instead of 10.
  local stencil = vim.fn.search("affine.for %i = 1 to 10", "w")
  local text = vim.api.nvim_buf_get_lines(0, stencil - 1, stencil, false)[1]
  vim.api.nvim_buf_set_lines(0, stencil - 1, stencil, false, { (text:gsub("to 10", "to 12")) })
  vim.api.nvim_win_set_cursor(0, { stencil, 0 })
  vim.cmd("AffineLspDraw")
  out.stencil_svg = string.format("%s/nests-line%d.svg", os.getenv("AFFINE_DIR"), stencil)
  local function viewed(count)
    return vim.wait(20000, function()
      local file = os.getenv("AFFINE_VIEWED")
      return vim.fn.filereadable(file) == 1 and #vim.fn.readfile(file) >= count
    end, 50)
  end
  out.viewed = viewed(1)

  -- Symbol values as command arguments.
  local triangle = vim.fn.search("affine.for %i = 0 to %n", "w")
  vim.api.nvim_win_set_cursor(0, { triangle, 0 })
  vim.cmd("AffineLspDraw n=10")
  out.triangle_svg = string.format("%s/nests-line%d.svg", os.getenv("AFFINE_DIR"), triangle)
  out.viewed = out.viewed and viewed(2)

  -- A line without a loop: an error, no file.
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  out.no_loop = require("affine_lsp.draw").draw({ open = false }) == nil

  -- Errors in the buffer name the buffer, not the temporary copy drawn.
  local load = vim.fn.search([=[\V%A[%i - 1, %j]]=], "w")
  local broken = vim.api.nvim_buf_get_lines(0, load - 1, load, false)[1]
  vim.api.nvim_buf_set_lines(0, load - 1, load, false, { (broken:gsub("%%i %- 1", "%%undefined")) })
  local _, reason = require("affine_lsp.draw").draw({ line = stencil, open = false })
  out.broken = reason
end)

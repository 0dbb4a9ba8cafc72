-- :AffineLspDraw [NAME=VALUE ...] — draw the iteration space of the loop nest on the
-- cursor's line with `affine-lsp draw`, write it as SVG and open it with the system's
-- viewer. The buffer's current text is drawn (unsaved changes included).
--
--   require("affine_lsp").setup({ draw = {
--     cmd = nil,        -- e.g. { "affine-lsp", "draw" }; default: the server command with
--                       -- `serve` replaced by `draw`
--     viewer = nil,     -- e.g. { "firefox" }; default: xdg-open, open (macOS) or start (Windows)
--     directory = nil,  -- where the SVGs go; default: a temporary directory
--   } })

local M = {}

--- `affine-lsp draw` from the server's command: {"python3", "-m", "affine_lsp", "serve",
--- "--stdio"} -> {"python3", "-m", "affine_lsp", "draw"}.
function M.draw_command(server_cmd)
  local found = nil
  for index, part in ipairs(server_cmd or {}) do
    if part == "serve" then
      found = index
    end
  end
  if found == nil then
    return { "affine-lsp", "draw" }
  end
  local command = {}
  for index = 1, found - 1 do
    table.insert(command, server_cmd[index])
  end
  table.insert(command, "draw")
  return command
end

--- The command that opens a file with the system's viewer.
function M.default_viewer()
  if vim.fn.has("mac") == 1 then
    return { "open" }
  elseif vim.fn.has("win32") == 1 then
    return { "cmd.exe", "/c", "start", "" }
  end
  return { "xdg-open" }
end

local function config()
  local root = require("affine_lsp")
  local settings = (root.config and root.config.draw) or {}
  return {
    cmd = settings.cmd or M.draw_command(root.config and root.config.cmd),
    viewer = settings.viewer or M.default_viewer(),
    directory = settings.directory,
  }
end

local function append(list, items)
  for _, item in ipairs(items) do
    table.insert(list, item)
  end
  return list
end

local function output_path(directory, bufnr, line)
  local dir = directory or vim.fn.fnamemodify(vim.fn.tempname(), ":h")
  vim.fn.mkdir(dir, "p")
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":t:r")
  if name == "" then
    name = "buffer" .. bufnr
  end
  return string.format("%s/%s-line%d.svg", dir, name, line)
end

--- Draw the nest on `opts.line` (default: the cursor's) of `opts.bufnr` with the symbol
--- values `opts.params` ({"n=10", ...}); open the SVG unless `opts.open == false`.
--- Returns the SVG's path, or nil and the reason.
function M.draw(opts)
  opts = opts or {}
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  local line = opts.line or vim.api.nvim_win_get_cursor(0)[1]
  local cfg = config()
  local source = vim.fn.tempname() .. ".mlir"
  vim.fn.writefile(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), source)
  local output = output_path(cfg.directory, bufnr, line)
  local command = append(vim.deepcopy(cfg.cmd), { source, "--line", tostring(line) })
  for _, param in ipairs(opts.params or {}) do
    append(command, { "--param", param })
  end
  append(command, { "-o", output })
  -- A list runs the program directly, without a shell.
  local messages = vim.fn.system(command)
  local status = vim.v.shell_error
  vim.fn.delete(source)
  -- Messages name the temporary copy: name the buffer instead.
  local name = vim.api.nvim_buf_get_name(bufnr)
  name = (name ~= "" and name or "[buffer]"):gsub("%%", "%%%%")
  messages = vim.trim((string.gsub(messages or "", vim.pesc(source), name)))
  if status ~= 0 then
    local reason = messages ~= "" and messages or ("affine-lsp draw exited with " .. status)
    vim.notify(reason, vim.log.levels.ERROR, { title = "affine-lsp" })
    return nil, reason
  end
  if messages ~= "" then
    vim.notify(messages, vim.log.levels.INFO, { title = "affine-lsp" })
  end
  if opts.open ~= false then
    local viewer = append(vim.deepcopy(cfg.viewer), { output })
    local job = vim.fn.jobstart(viewer, { detach = true })
    if job <= 0 then
      local reason = "cannot start the viewer " .. cfg.viewer[1] .. "; the picture is " .. output
      vim.notify(reason, vim.log.levels.WARN, { title = "affine-lsp" })
    end
  end
  return output
end

--- Define :AffineLspDraw.
function M.register()
  vim.api.nvim_create_user_command("AffineLspDraw", function(args)
    M.draw({ params = args.fargs })
  end, {
    nargs = "*",
    desc = "Draw the iteration space of the loop nest on this line (args: NAME=VALUE)",
  })
end

return M

-- affine-lsp for Neovim: filetype, language server and tree-sitter grammar.
--
--   require("affine_lsp").setup()            -- defaults
--   require("affine_lsp").setup({ cmd = { "python3", "-m", "affine_lsp", "serve" } })
--
-- Works on Neovim 0.7 (vim.lsp.start_client) and later (vim.lsp.start).

local M = {}

local defaults = {
  -- Command that starts the server (stdio).
  cmd = { "affine-lsp", "serve" },
  filetypes = { "mlir" },
  -- Files or directories that mark a project root (the first match upwards).
  root_markers = { ".git", "pyproject.toml" },
  -- Server settings, answered to workspace/configuration (section "affineLsp")
  -- and sent as initializationOptions.
  settings = {
    affineLsp = {
      fusion = { tolerance = 0.3 },
      legacySyntax = { severity = "warning" },
      lints = { enabled = true },
      logLevel = "info",
      transforms = { tileSizes = { 32 }, unrollFactor = 4, unrollJamFactor = 2 },
      hover = { pictures = "auto" },
      refactorings = { planInBackground = true },
      performanceHints = { enabled = true },
      optimize = { enabled = true, tune = false },
    },
  },
  -- Register the tree-sitter grammar and queries of this repository
  -- (for nvim-treesitter users, and for a prebuilt parser in `parser_path`).
  treesitter = true,
  parser_path = nil,
  on_attach = nil,
  capabilities = nil,
  -- :AffineLspDraw (see lua/affine_lsp/draw.lua): the `affine-lsp draw` command
  -- (default: `cmd` with `serve` replaced by `draw`), the viewer (default: xdg-open,
  -- open or start) and where the SVGs go (default: a temporary directory).
  draw = { cmd = nil, viewer = nil, directory = nil },
}

M.config = nil
local clients = {} -- root_dir -> client id

--- Directory of this repository (…/editors/neovim/lua/affine_lsp/init.lua → …).
function M.repo_root()
  local source = debug.getinfo(1, "S").source:sub(2)
  local dir = vim.fn.fnamemodify(source, ":p:h")
  return vim.fn.fnamemodify(dir, ":h:h:h:h")
end

local function find_root(bufnr, markers)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local start = name ~= "" and vim.fn.fnamemodify(name, ":p:h") or vim.loop.cwd()
  for _, marker in ipairs(markers) do
    local found = vim.fn.finddir(marker, start .. ";")
    if found == "" then
      found = vim.fn.findfile(marker, start .. ";")
    end
    if found ~= "" then
      return vim.fn.fnamemodify(found, ":p:h:h")
    end
  end
  return start
end

-- Answer workspace/configuration from the configured settings.
local function configuration_handler(settings)
  return function(_, params, _)
    local results = {}
    for _, item in ipairs(params.items or {}) do
      local value = settings
      if item.section then
        for part in string.gmatch(item.section, "[^.]+") do
          value = type(value) == "table" and value[part] or nil
        end
      end
      table.insert(results, value == nil and vim.NIL or value)
    end
    return results
  end
end

local function client_config(bufnr)
  local cfg = M.config
  local root = find_root(bufnr, cfg.root_markers)
  return {
    name = "affine-lsp",
    cmd = cfg.cmd,
    root_dir = root,
    init_options = cfg.settings,
    settings = cfg.settings,
    capabilities = cfg.capabilities or vim.lsp.protocol.make_client_capabilities(),
    on_attach = cfg.on_attach,
    handlers = { ["workspace/configuration"] = configuration_handler(cfg.settings) },
  }
end

--- Start (or reuse) the server for a buffer and attach it.
function M.attach(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local config = client_config(bufnr)
  if vim.lsp.start then
    return vim.lsp.start(config, { bufnr = bufnr })
  end
  local id = clients[config.root_dir]
  if id == nil or vim.lsp.get_client_by_id(id) == nil then
    id = vim.lsp.start_client(config)
    clients[config.root_dir] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

local function register_filetype()
  if vim.filetype and vim.filetype.add then
    vim.filetype.add({ extension = { mlir = "mlir" } })
  end
  vim.cmd([[
    augroup affine_lsp_filetype
      autocmd!
      autocmd BufRead,BufNewFile *.mlir setfiletype mlir
    augroup END
  ]])
end

local function register_highlights()
  -- Distinct captures for affine specifics, linked to standard groups.
  local links = {
    ["variable.parameter.dimension"] = "Identifier",
    ["variable.parameter.symbol"] = "Constant",
    ["variable.induction"] = "Identifier",
    ["function.affine"] = "Function",
    ["comment.special"] = "SpecialComment",
    ["keyword.deprecated"] = "WarningMsg",
  }
  local ok, highlighter = pcall(require, "vim.treesitter.highlighter")
  if ok and highlighter.hl_map then -- Neovim 0.7: capture -> group table
    for capture, group in pairs(links) do
      highlighter.hl_map[capture] = group
    end
  end
  -- Neovim 0.8+: @capture groups. Neovim 0.7 refuses "@" in a group name with a
  -- W18 message that pcall does not silence: never ask it.
  if vim.fn.has("nvim-0.8") == 1 then
    for capture, group in pairs(links) do
      vim.api.nvim_set_hl(0, "@" .. capture, { link = group, default = true })
    end
  end
end

--- Make the grammar of this repository known to Neovim.
function M.register_treesitter()
  local root = M.repo_root()
  local neovim_dir = root .. "/editors/neovim"
  -- queries/mlir/*.scm (a link to grammar/queries) for every user.
  if not string.find(vim.o.runtimepath, neovim_dir, 1, true) then
    vim.opt.runtimepath:prepend(neovim_dir)
  end
  local ok, parsers = pcall(require, "nvim-treesitter.parsers")
  if ok and parsers.get_parser_configs then
    parsers.get_parser_configs().mlir = {
      install_info = {
        url = root .. "/grammar",
        files = { "src/parser.c", "src/scanner.c" },
      },
      filetype = "mlir",
    }
  end
  local path = M.config and M.config.parser_path
  if path and vim.fn.filereadable(path) == 1 then
    if vim.treesitter.language and vim.treesitter.language.add then
      vim.treesitter.language.add("mlir", { path = path })
    else
      vim.treesitter.require_language("mlir", path)
    end
  end
  register_highlights()
end

--- Tell the running servers that a project file (.affine-lsp.toml) changed: they
--- read it again and re-check the documents it applies to.
function M.project_file_changed(path)
  local uri = vim.uri_from_fname(vim.fn.fnamemodify(path, ":p"))
  local get_clients = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, client in pairs(get_clients()) do
    if client.name == "affine-lsp" then
      client.notify("workspace/didChangeWatchedFiles", { changes = { { uri = uri, type = 2 } } })
    end
  end
end

--- Configure affine-lsp. Safe to call more than once.
function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(defaults), opts or {})
  register_filetype()
  if M.config.treesitter then
    M.register_treesitter()
  end
  require("affine_lsp.draw").register()
  local group = vim.api.nvim_create_augroup("affine_lsp", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = M.config.filetypes,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  vim.api.nvim_create_autocmd("BufWritePost", {
    group = group,
    pattern = ".affine-lsp.toml",
    callback = function(args)
      M.project_file_changed(args.file)
    end,
  })
end

return M

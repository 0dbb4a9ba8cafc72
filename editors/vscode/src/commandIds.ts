/** Ids of the commands the extension contributes (see package.json `contributes.commands`). */
export const COMMAND_IDS = {
  restartServer: "affineLsp.restartServer",
  fuseLoopsAtCursor: "affineLsp.fuseLoopsAtCursor",
  showIterationDomain: "affineLsp.showIterationDomain",
  checkWorkspace: "affineLsp.checkWorkspace",
} as const;

/** Ids of the commands the extension contributes (see package.json `contributes.commands`). */
export const COMMAND_IDS = {
  restartServer: "affineLsp.restartServer",
  fuseLoopsAtCursor: "affineLsp.fuseLoopsAtCursor",
  showIterationDomain: "affineLsp.showIterationDomain",
  showIterationSpace: "affineLsp.showIterationSpace",
  checkWorkspace: "affineLsp.checkWorkspace",
} as const;

/**
 * Detects LLVM's MLIR extension, says once what happens while both are active,
 * and filters affine-lsp's diagnostics as `affineLsp.diagnostics.besideLlvmMlir`
 * decides (see llvmMlir.ts). The filter is applied when our server publishes
 * and again whenever mlir-lsp-server's diagnostics change.
 */
import * as vscode from "vscode";
import type { HandleDiagnosticsSignature } from "vscode-languageclient/node";
import type { BesideLlvmMlir, DiagnosticFacts } from "./llvmMlir";
import {
  BESIDE_LLVM_MLIR_KEY,
  LLVM_MLIR_EXTENSION_ID,
  MLIR_SERVER_SOURCE,
  coexistenceNotice,
  diagnosticsToShow,
  readBesideLlvmMlir,
} from "./llvmMlir";
import { SETTINGS_SECTION } from "./settings";

const NOTICE_SHOWN_KEY = "affineLsp.llvmMlirNoticeShown";

function facts(diagnostic: vscode.Diagnostic): DiagnosticFacts {
  return { line: diagnostic.range.start.line, isError: diagnostic.severity === vscode.DiagnosticSeverity.Error };
}

export class LlvmMlirCoexistence implements vscode.Disposable {
  /** What our server last published, per document, and what of it is shown. */
  private readonly published = new Map<
    string,
    { uri: vscode.Uri; diagnostics: vscode.Diagnostic[]; shown: vscode.Diagnostic[] }
  >();
  private collection: vscode.DiagnosticCollection | undefined;
  private readonly subscriptions: vscode.Disposable[];

  constructor(
    private readonly state: vscode.Memento,
    private readonly output: vscode.LogOutputChannel,
  ) {
    this.subscriptions = [
      vscode.languages.onDidChangeDiagnostics((event) => this.refilter(event.uris)),
      vscode.extensions.onDidChange(() => {
        this.refilterAll();
        void this.noticeOnce();
      }),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration(`${SETTINGS_SECTION}.${BESIDE_LLVM_MLIR_KEY}`)) {
          this.refilterAll();
        }
      }),
    ];
  }

  /** True while LLVM's MLIR extension is installed and enabled. */
  get active(): boolean {
    return vscode.extensions.getExtension(LLVM_MLIR_EXTENSION_ID) !== undefined;
  }

  get mode(): BesideLlvmMlir {
    return readBesideLlvmMlir(vscode.workspace.getConfiguration(SETTINGS_SECTION).get(BESIDE_LLVM_MLIR_KEY));
  }

  /** The collection our language client publishes into (set when a client starts). */
  attach(collection: vscode.DiagnosticCollection | undefined): void {
    this.collection = collection;
  }

  /** Forgets the stopped client's diagnostics. */
  detach(): void {
    this.collection = undefined;
    this.published.clear();
  }

  /** Language client middleware for `textDocument/publishDiagnostics`. */
  handleDiagnostics = (uri: vscode.Uri, diagnostics: vscode.Diagnostic[], next: HandleDiagnosticsSignature): void => {
    const shown = this.shown(uri, diagnostics);
    this.published.set(uri.toString(), { uri, diagnostics, shown });
    next(uri, shown);
  };

  /** Tells the user once (ever) what happens while both extensions are active. */
  async noticeOnce(): Promise<void> {
    if (!this.active || this.state.get<boolean>(NOTICE_SHOWN_KEY) === true) {
      return;
    }
    await this.state.update(NOTICE_SHOWN_KEY, true);
    const message = coexistenceNotice(this.mode);
    this.output.info(message);
    const openSetting = "Open Setting";
    if ((await vscode.window.showInformationMessage(message, openSetting)) === openSetting) {
      await vscode.commands.executeCommand(
        "workbench.action.openSettings",
        `${SETTINGS_SECTION}.${BESIDE_LLVM_MLIR_KEY}`,
      );
    }
  }

  dispose(): void {
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
  }

  private shown(uri: vscode.Uri, ours: vscode.Diagnostic[]): vscode.Diagnostic[] {
    if (!this.active) {
      return ours;
    }
    const theirs = vscode.languages
      .getDiagnostics(uri)
      .filter((diagnostic) => diagnostic.source === MLIR_SERVER_SOURCE)
      .map(facts);
    return diagnosticsToShow(ours, theirs, facts, this.mode);
  }

  private refilter(uris: readonly vscode.Uri[]): void {
    const collection = this.collection;
    if (collection === undefined) {
      return;
    }
    for (const uri of uris) {
      const entry = this.published.get(uri.toString());
      if (entry === undefined) {
        continue;
      }
      const wanted = this.shown(entry.uri, entry.diagnostics);
      // Setting the collection fires onDidChangeDiagnostics again: only set when it differs.
      if (wanted.length !== entry.shown.length || wanted.some((diagnostic, index) => diagnostic !== entry.shown[index])) {
        entry.shown = wanted;
        collection.set(entry.uri, wanted);
      }
    }
  }

  private refilterAll(): void {
    this.refilter([...this.published.values()].map((entry) => entry.uri));
  }
}

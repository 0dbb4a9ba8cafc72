/** A language client whose answers are scripted per method, recording what it is sent. */

export interface SentRequest {
  method: string;
  params: unknown;
}

/** A language client whose answers are scripted per method. */
export class FakeClient {
  sent: SentRequest[] = [];
  answers = new Map<string, (params: unknown) => unknown>();

  code2ProtocolConverter = {
    asUri: (uri: { toString(): string }) => uri.toString(),
    asRange: (range: { start: unknown; end: unknown }) => ({ start: range.start, end: range.end }),
    asPosition: (position: { line: number; character: number }) => ({ line: position.line, character: position.character }),
    asDiagnostics: () => Promise.resolve([]),
  };

  protocol2CodeConverter = {
    asWorkspaceEdit: (edit: unknown) => Promise.resolve({ convertedFrom: edit }),
  };

  sendRequest(type: string | { method: string }, params: unknown): Promise<unknown> {
    const method = typeof type === "string" ? type : type.method;
    this.sent.push({ method, params });
    const answer = this.answers.get(method);
    if (answer === undefined) {
      return Promise.reject(Object.assign(new Error(`Unhandled method ${method}`), { code: -32601 }));
    }
    try {
      return Promise.resolve(answer(params));
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }
}


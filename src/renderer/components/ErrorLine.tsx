// One line for an error or a notice, with a way to dismiss it. Never a stack trace.

export function ErrorLine({ message, onDismiss, kind = 'error' }: { message: string | null; onDismiss?: () => void; kind?: 'error' | 'notice' }) {
  if (!message) return null;
  return (
    <div className={`line line-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      <span className="line-text">{message}</span>
      {onDismiss && (
        <button type="button" className="icon-button" aria-label="Dismiss message" onClick={onDismiss}>
          ×
        </button>
      )}
    </div>
  );
}

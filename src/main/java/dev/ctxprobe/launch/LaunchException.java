package dev.ctxprobe.launch;

/** A command that could not be started at all; carries the refusal to record on the step. */
public final class LaunchException extends java.io.IOException {
    private static final long serialVersionUID = 1L;
    private final transient Refusal refusal;

    public LaunchException(Refusal refusal, Throwable cause) {
        super(refusal.detail(), cause);
        this.refusal = refusal;
    }

    public Refusal refusal() {
        return refusal;
    }
}

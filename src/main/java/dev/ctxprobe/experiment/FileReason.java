package dev.ctxprobe.experiment;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.Locale;

/**
 * Why the operating system refused a file operation, in its own words ("permission denied", "read-only file
 * system"): Java's exceptions carry the path as their message and the reason only in their type or {@code
 * getReason()}, so printing the message alone tells a user nothing.
 */
public final class FileReason {
    private FileReason() {}

    /** The reason, lower case, without the path or any Java type name. */
    public static String of(IOException e) {
        if (e instanceof FileSystemException f && f.getReason() != null) {
            return f.getReason().toLowerCase(Locale.ROOT);
        }
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof NoSuchFileException) {
            return "no such file or folder";
        }
        if (e instanceof NotDirectoryException) {
            return "not a folder";
        }
        if (e instanceof FileAlreadyExistsException) {
            return "a file of that name is in the way";
        }
        String message = e.getMessage();
        return message == null || message.isBlank() ? "the system gave no reason" : message;
    }
}

import NIOCore

/// Encodes commands as RESP arrays of bulk strings (binary-safe).
enum RESPEncoder {
    static func encode(_ arguments: [[UInt8]], into buffer: inout ByteBuffer) {
        buffer.writeString("*\(arguments.count)\r\n")
        for argument in arguments {
            buffer.writeString("$\(argument.count)\r\n")
            buffer.writeBytes(argument)
            buffer.writeString("\r\n")
        }
    }
}

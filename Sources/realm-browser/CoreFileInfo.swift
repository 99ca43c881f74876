import Foundation
import RealmCoreFile
import RealmStorage
import RealmTools

/// The Realm Core file at `path`, if it is one: by its `T-DB` header, or (encrypted, when a key is given) by
/// opening it with the key after our own format refused it.
/// Without a key, one of our encrypted files is an error that names the flags that give the key, and a file our
/// format refused that is laid out as an encrypted Realm Core file is (no header, whole pages) is an error that says
/// a key may open it, beside our format's own reason. With a key that opens such a file as neither, the error is
/// the wrong key.
func openRealmCoreFile(_ path: String, key: [UInt8]?, ownFormatError: Error? = nil) throws -> RealmCoreFile? {
    if RealmCoreFile.looksLikeRealmCoreFile(path: path) { return try RealmCoreFile(path: path, key: key) }
    guard let ownFormatError else { return nil }
    guard let key else {
        if case StorageError.encryptionKeyRequired? = ownFormatError as? StorageError {
            // One of ours, by its encryption header.
            throw CommandFailure(message: "\(path): the file is encrypted: give its 64-byte key with --key or --key-file")
        }
        do {
            _ = try RealmCoreFile(path: path, key: nil)
        } catch RealmCoreFileError.keyRequired {
            throw CommandFailure(message: "\(ownFormatError); if it is an encrypted Realm Core file, give its 64-byte key "
                                 + "with --key or --key-file")
        } catch {
            return nil  // not laid out as one either: the caller reports its own error
        }
        return nil
    }
    do {
        return try RealmCoreFile(path: path, key: key)
    } catch RealmCoreFileError.wrongKey(let p) {
        // Not one of ours by its header, and the key does not open it as an encrypted Realm Core file: the key is
        // the likelier mistake, as the browser and `convert` say. (One of ours refuses a wrong key itself.)
        if case StorageError.notADatabase? = ownFormatError as? StorageError { throw RealmCoreFileError.wrongKey(path: p) }
        return nil
    } catch {
        return nil  // not one either: the caller reports its own error
    }
}

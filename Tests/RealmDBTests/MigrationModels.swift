import Foundation
import RealmDB

// Model classes for MigrationTests: each version of a class is a Swift class of its own that shares the
// class name in the file through `className()`.

// MARK: The seeds' Person: firstName/lastName (v0) → fullName (v1) → + email (v2)

final class SeedPersonV0: Object {
    @Persisted var firstName = ""
    @Persisted var lastName = ""
    @Persisted var age = 0
    override class func className() -> String { "SeedPerson" }
}

final class SeedPersonV1: Object {
    @Persisted var fullName = ""
    @Persisted var age = 0
    override class func className() -> String { "SeedPerson" }
}

final class SeedPersonV2: Object {
    @Persisted var fullName = ""
    @Persisted var email = ""
    @Persisted var age = 0
    override class func className() -> String { "SeedPerson" }
}

// MARK: Renames: yearsSinceBirth → age (indexed), friend → buddy (a link with backlinks), pets → animals

final class RenPetV0: Object {
    @Persisted var name = ""
    @Persisted(originProperty: "pets") var keepers: LinkingObjects<RenOwnerV0>
    override class func className() -> String { "RenPet" }
}

final class RenOwnerV0: Object {
    @Persisted var name = ""
    @Persisted(indexed: true) var yearsSinceBirth = 0
    @Persisted var friend: RenPetV0?
    @Persisted var pets: List<RenPetV0>
    override class func className() -> String { "RenOwner" }
}

final class RenPetV1: Object {
    @Persisted var name = ""
    @Persisted(originProperty: "animals") var keepers: LinkingObjects<RenOwnerV1>
    override class func className() -> String { "RenPet" }
}

final class RenOwnerV1: Object {
    @Persisted var name = ""
    @Persisted(indexed: true) var age = 0
    @Persisted var buddy: RenPetV1?
    @Persisted var animals: List<RenPetV1>
    override class func className() -> String { "RenOwner" }
}

/// A rename that also changes optionality and drops the index (applied during the rename, as in Realm).
final class RenOwnerV2: Object {
    @Persisted var name = ""
    @Persisted var age: Int?
    @Persisted var buddy: RenPetV2?
    @Persisted var animals: List<RenPetV2>
    override class func className() -> String { "RenOwner" }
}

final class RenPetV2: Object {
    @Persisted var name = ""
    @Persisted(originProperty: "animals") var keepers: LinkingObjects<RenOwnerV2>
    override class func className() -> String { "RenPet" }
}

// MARK: Old and new values of lists and links

final class MigDogV0: Object {
    @Persisted var name = ""
    override class func className() -> String { "MigDog" }
}

final class MigOwnerV0: Object {
    @Persisted var name = ""
    @Persisted var dogs: List<MigDogV0>
    @Persisted var best: MigDogV0?
    @Persisted var tags: List<String>
    @Persisted var tag = ""
    override class func className() -> String { "MigOwner" }
}

final class MigDogV1: Object {
    @Persisted var name = ""
    override class func className() -> String { "MigDog" }
}

/// `tag` becomes a list of strings (a type change into a primitive list), `tags` goes, `dogCount` and
/// `bestName` are computed by the block.
final class MigOwnerV1: Object {
    @Persisted var name = ""
    @Persisted var dogs: List<MigDogV1>
    @Persisted var best: MigDogV1?
    @Persisted var tag: List<String>
    @Persisted var dogCount = 0
    @Persisted var bestName = ""
    override class func className() -> String { "MigOwner" }
}

// MARK: Type and optionality changes

final class ChangeV0: Object {
    @Persisted var code = 0
    @Persisted var count: Int?
    @Persisted var label = ""
    @Persisted var scores: List<Int?>
    override class func className() -> String { "Change" }
}

final class ChangeV1: Object {
    @Persisted var code = ""
    @Persisted var count = 0
    @Persisted var label: String?
    @Persisted var scores: List<Int>
    override class func className() -> String { "Change" }
}

// MARK: Indexes and new classes without a version bump

final class IdxV0: Object {
    @Persisted var name = ""
    @Persisted(indexed: true) var city = ""
    override class func className() -> String { "Idx" }
}

final class IdxV1: Object {
    @Persisted(indexed: true) var name = ""
    @Persisted var city = ""
    override class func className() -> String { "Idx" }
}

final class Extra: Object {
    @Persisted var note = ""
}

// MARK: deleteData, create and delete

final class GoneV0: Object {
    @Persisted var x = 0
    override class func className() -> String { "Gone" }
}

final class KeptV0: Object {
    @Persisted var x = 0
    override class func className() -> String { "Kept" }
}

final class KeptV1: Object {
    @Persisted var x = 0
    @Persisted var y = 0
    override class func className() -> String { "Kept" }
}

// MARK: A new class linked to and from existing ones in the same migration

final class ToyOwnerV0: Object {
    @Persisted var name = ""
    override class func className() -> String { "ToyOwner" }
}

final class ToyOwnerV1: Object {
    @Persisted var name = ""
    @Persisted var toys: List<Toy>
    override class func className() -> String { "ToyOwner" }
}

final class Toy: Object {
    @Persisted var label = ""
    @Persisted(originProperty: "toys") var owners: LinkingObjects<ToyOwnerV1>
}

// MARK: Primary keys

final class KeyedV0: Object {
    @Persisted var code = ""
    @Persisted var n = 0
    override class func className() -> String { "Keyed" }
}

final class KeyedV1: Object {
    @Persisted(primaryKey: true) var code = ""
    @Persisted var n = 0
    override class func className() -> String { "Keyed" }
}

/// The key moves from `code` to `n` (a required int: an indexed key, since the objects already exist).
final class KeyedV2: Object {
    @Persisted var code = ""
    @Persisted(primaryKey: true) var n = 0
    override class func className() -> String { "Keyed" }
}

/// A required int key from the start (the object key is the key's value), dropped in KeyedIntV1.
final class KeyedIntV0: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    override class func className() -> String { "KeyedInt" }
}

final class KeyedIntV1: Object {
    @Persisted var id = 0
    @Persisted var name = ""
    override class func className() -> String { "KeyedInt" }
}

/// A key added as a new property; the block gives it unique values.
final class KeyedIntV2: Object {
    @Persisted var id = 0
    @Persisted var name = ""
    @Persisted(primaryKey: true) var uid = ""
    override class func className() -> String { "KeyedInt" }
}

/// A property name the engine refuses (longer than 63 bytes): a schema change the engine cannot make.
final class TooLongV1: Object {
    @Persisted var x = 0
    @Persisted var aPropertyNameThatIsFarTooLongForTheStorageEngineToAcceptAtAllReally = 0
    override class func className() -> String { "Kept" }
}

/// The key changes type: int (the object key) → string.
final class KeyTypeV0: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    override class func className() -> String { "KeyType" }
}

final class KeyTypeV1: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var name = ""
    override class func className() -> String { "KeyType" }
}

// MARK: A list of links becomes a to-one link; the target's LinkingObjects follows it

final class ShapeDogV0: Object {
    @Persisted var name = ""
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<ShapeOwnerV0>
    override class func className() -> String { "ShapeDog" }
}

final class ShapeOwnerV0: Object {
    @Persisted var name = ""
    @Persisted(indexed: true) var nickname = ""
    @Persisted var dogs: List<ShapeDogV0>
    override class func className() -> String { "ShapeOwner" }
}

final class ShapeDogV1: Object {
    @Persisted var name = ""
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<ShapeOwnerV1>
    override class func className() -> String { "ShapeDog" }
}

/// `dogs` is now one dog; `nickname` (indexed) is gone.
final class ShapeOwnerV1: Object {
    @Persisted var name = ""
    @Persisted var dogs: ShapeDogV1?
    override class func className() -> String { "ShapeOwner" }
}

// MARK: Many objects

final class BulkV0: Object {
    @Persisted var n = 0
    @Persisted var s = ""
    @Persisted(indexed: true) var tag = ""
    override class func className() -> String { "Bulk" }
}

final class BulkV1: Object {
    @Persisted var n = ""
    @Persisted var s: String?
    @Persisted(indexed: true) var tag = ""
    @Persisted var extra = 0.0
    override class func className() -> String { "Bulk" }
}

/// `city` (indexed) changes type and stays indexed.
final class IdxV2: Object {
    @Persisted var name = ""
    @Persisted(indexed: true) var city = 0
    override class func className() -> String { "Idx" }
}

/// Links to `Change`, whose `code` changes type: the old object's link must lead to the old `code`.
final class LinkerV0: Object {
    @Persisted var target: ChangeV0?
    @Persisted var targets: List<ChangeV0>
    override class func className() -> String { "Linker" }
}

final class LinkerV1: Object {
    @Persisted var target: ChangeV1?
    @Persisted var targets: List<ChangeV1>
    @Persisted var codes = ""
    override class func className() -> String { "Linker" }
}

export { declaredMemberCount, readMembers, ZipUnreadable, type ZipMember } from './central-directory.js'
export { extractMember, inflateStep, peekMember, type Extracted } from './bounded-inflate.js'

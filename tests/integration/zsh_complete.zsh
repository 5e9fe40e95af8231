# zsh_complete.zsh FPATH_DIR LINE...: for each LINE, print "<LINE>" and
# then, one per line, every match zsh's completion system offers for it
# (the cursor at its end), with the completion functions of FPATH_DIR
# first on $fpath. Drives one interactive `zsh -f` in a zpty and records
# what reaches compadd. Every wait is bounded.
zmodload zsh/zpty || exit 3
fdir=$1
shift

# Read from the pty until its output holds $1, at most ~10 s.
zc_read_until() {
  local chunk tries=0
  while (( tries++ < 200 )); do
    if zpty -r -t z chunk 2>/dev/null; then
      zc_out+=$chunk
      [[ $zc_out == *$1* ]] && return 0
    else
      sleep 0.05
    fi
  done
  return 1
}

zpty z zsh -f -i || exit 3
zpty -w z "PS1=''; PS2=''; unsetopt zle_bracketed_paste; fpath=(${(q)fdir} \$fpath)"
zpty -w z 'autoload -Uz compinit; compinit -u -D'
zpty -w z 'compadd() {
  local -a zc_hits
  builtin compadd -O zc_hits "$@"
  (( $#zc_hits )) && print -rl -- "<M>"${^zc_hits}
  builtin compadd "$@"
}'
zpty -w z 'zstyle ":completion:*" list-prompt ""; setopt nobeep; bindkey "^I" complete-word'
zpty -w z 'print -r -- "<RE""ADY>"'
zc_out=
zc_read_until '<READY>' || { print -u2 "zsh did not start"; zpty -d z; exit 4; }
rc=0
n=0
for line in "$@"; do
  zc_out=
  zpty -w -n z "$line"$'\t'
  zpty -w z $'\C-e\C-u print -r -- "<DO""NE'$((++n))'>"'
  zc_read_until "<DONE$n>" || rc=1
  print -r -- "<LINE>"
  print -r -- "$zc_out" | tr -d '\r' | grep -a -o '<M>.*' | sed 's/^<M>//' | sort -u
done
zpty -d z
exit $rc
